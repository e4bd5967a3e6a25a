#include "db/postgres_connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/hex.h"
#include "common/time_source.h"
#include "db/postgres_io.h"
#include "db/storage_health.h"

namespace npac::db {
namespace {

constexpr const char* kReachHint =
    "check that the PostgreSQL server is running and reachable at this address "
    "(pg_isready -d <url>), the URL's host, port, user and database, and pg_hba.conf";

constexpr const char* kUrlHint =
    "write it as postgresql://user[:password]@host[:port]/dbname[?param=value] (libpq \"Connection URIs\")";

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Status by SQLSTATE (PostgreSQL documentation, "Appendix A. PostgreSQL Error Codes").
Status statusFromSqlstate(std::string_view sqlstate, std::string message, const std::string& location) {
  using Code = Status::Code;
  Code code = Code::kInternal;
  std::string hint;
  if (startsWith(sqlstate, "23")) {
    code = Code::kConstraint;
  } else if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03") {
    code = Code::kBusy;
    hint = "another session held a conflicting lock or the transaction could not be serialised; retry";
  } else if (sqlstate == "57014") {
    // statement_timeout, set below npacd's answer bound (PostgresConnection::limitStatements).
    code = Code::kBusy;
    hint = "the statement ran longer than the server's statement_timeout (4/5 of npacd's --db-timeout): the "
           "PostgreSQL server is overloaded or the statement too large; retry, or raise --db-timeout";
  } else if (sqlstate == "53100") {
    code = Code::kFull;
    hint = "the PostgreSQL server's disk is full: free space on it; nothing was written by the failed "
           "transaction";
  } else if (startsWith(sqlstate, "08") || sqlstate == "57P01" || sqlstate == "57P02" ||
             sqlstate == "57P03") {
    code = Code::kUnavailable;
    hint = kReachHint;
  } else if (startsWith(sqlstate, "28")) {
    code = Code::kCantOpen;
    hint = "PostgreSQL refused the credentials: check the URL's user and password and pg_hba.conf";
  } else if (sqlstate == "3D000") {
    code = Code::kCantOpen;
    hint = "the database in the URL does not exist: create it (createdb) or fix the URL";
  } else if (startsWith(sqlstate, "25P02")) {
    code = Code::kInternal;
    hint = "a statement ran in a transaction that had already failed";
  } else if (startsWith(sqlstate, "22")) {
    code = Code::kInvalidArgument;
  } else if (startsWith(sqlstate, "53") || sqlstate == "54000") {
    code = Code::kOverloaded;
    hint = "the PostgreSQL server is out of a resource (connections, memory): retry later or raise "
           "its limits";
  } else {
    hint = "unexpected PostgreSQL error; report it with this message";
  }
  return Status::make(code, std::move(message), location, std::move(hint)).withSqlstate(std::string(sqlstate));
}

// libpq's messages end in a newline and may span lines (LINE 1: …, HINT: …): one line
// for the log.
std::string trimmed(const char* text) {
  std::string out = text != nullptr ? text : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  std::string flat;
  flat.reserve(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\n' || out[i] == '\t') {
      if (!flat.empty() && flat.back() != ' ') flat += ' ';
      continue;
    }
    flat += out[i];
  }
  return flat;
}


}  // namespace

std::string redactPostgresUrl(std::string_view url) {
  // scheme://user:password@host…/db?…&password=…: the userinfo's password and every
  // `password` query parameter (libpq "Connection URIs") are hidden.
  std::string out(url);
  const std::size_t scheme = out.find("://");
  if (scheme == std::string::npos) return out;
  const std::size_t start = scheme + 3;
  // The authority (userinfo@host:port) ends at the first '/', '?' or '#' (RFC 3986 §3.2).
  const std::size_t authority_end = out.find_first_of("/?#", start);
  const std::size_t at = out.find('@', start);
  if (at != std::string::npos && (authority_end == std::string::npos || at < authority_end)) {
    const std::size_t colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out = out.substr(0, colon + 1) + "***" + out.substr(at);
  }
  const std::size_t query = out.find('?', start);
  if (query == std::string::npos) return out;
  std::size_t param = query + 1;
  while (param < out.size()) {
    std::size_t end = out.find('&', param);
    if (end == std::string::npos) end = out.size();
    if (out.compare(param, 9, "password=") == 0 && end > param + 9) {
      out.replace(param + 9, end - param - 9, "***");
      end = param + 9 + 3;
    }
    param = end + 1;
  }
  return out;
}

bool isPostgresUrl(std::string_view location) {
  return startsWith(location, "postgresql://") || startsWith(location, "postgres://");
}

std::string numberPlaceholders(std::string_view sql, int* count) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$';
      out += std::to_string(++n);
    } else {
      out += c;
    }
  }
  if (count != nullptr) *count = n;
  return out;
}

// --- PostgresStatement ---------------------------------------------------------------

PostgresStatement::PostgresStatement(PostgresConnection* connection, std::string sql, std::string name,
                                     int params)
    : connection_(connection),
      sql_(std::move(sql)),
      name_(std::move(name)),
      params_(params),
      prepared_in_session_(connection->session()),
      values_(static_cast<std::size_t>(params)),
      is_null_(static_cast<std::size_t>(params), 1),
      formats_(static_cast<std::size_t>(params), 0) {}

PostgresStatement::~PostgresStatement() {
  clearResult();
  if (prepared_in_session_ == connection_->session() && PQstatus(connection_->handle()) == CONNECTION_OK) {
    const std::string deallocate = "DEALLOCATE " + name_;
    auto done = connection_->requestText(deallocate);
    if (done.isOk()) PQclear(done.value());
  }
}

bool PostgresStatement::validIndex(int index) {
  if (index >= 0 && index < params_) return true;
  if (bind_error_.isOk()) {
    bind_error_ = Status::internal("binding parameter " + std::to_string(index) + " of a statement with " +
                                   std::to_string(params_) + " (in: " + sql_.substr(0, 120) + ")");
  }
  return false;
}

void PostgresStatement::bindInt64(int index, std::int64_t value) {
  if (!validIndex(index)) return;
  values_[index] = std::to_string(value);
  is_null_[index] = 0;
  formats_[index] = 0;
}

void PostgresStatement::bindDouble(int index, double value) {
  if (!validIndex(index)) return;
  // float8in reads what std::to_chars writes, and "NaN", "Infinity", "-Infinity".
  if (std::isnan(value)) {
    values_[index] = "NaN";
  } else if (std::isinf(value)) {
    values_[index] = value > 0 ? "Infinity" : "-Infinity";
  } else {
    char text[32];
    const auto written = std::to_chars(text, text + sizeof text, value);
    values_[index].assign(text, written.ptr);
  }
  is_null_[index] = 0;
  formats_[index] = 0;
}

void PostgresStatement::bindText(int index, std::string_view value) {
  if (!validIndex(index)) return;
  if (value.find('\0') != std::string_view::npos) {
    if (bind_error_.isOk()) bind_error_ = Status::invalidArgument("text holds a NUL byte");
    return;
  }
  values_[index].assign(value);
  is_null_[index] = 0;
  formats_[index] = 0;
}

void PostgresStatement::bindBlob(int index, std::span<const std::uint8_t> value) {
  if (!validIndex(index)) return;
  values_[index].assign(reinterpret_cast<const char*>(value.data()), value.size());
  is_null_[index] = 0;
  formats_[index] = 1;
}

void PostgresStatement::bindNull(int index) {
  if (!validIndex(index)) return;
  is_null_[index] = 1;
}

void PostgresStatement::clearResult() {
  if (result_ != nullptr) PQclear(result_);
  result_ = nullptr;
  rows_ = 0;
  row_ = -1;
}

Status PostgresStatement::execute() {
  if (Status refused = connection_->refusedNow(); !refused) return refused;
  if (Status status = connection_->ensureConnected(); !status) return status;
  if (prepared_in_session_ != connection_->session()) {
    int count = 0;
    const std::string text = numberPlaceholders(sql_, &count);
    if (Status status = connection_->prepareOnServer(name_, text, count); !status) return status;
    prepared_in_session_ = connection_->session();
  }
  std::vector<const char*> values(static_cast<std::size_t>(params_));
  std::vector<int> lengths(static_cast<std::size_t>(params_));
  for (int i = 0; i < params_; ++i) {
    values[i] = is_null_[i] != 0 ? nullptr : values_[i].data();
    lengths[i] = static_cast<int>(values_[i].size());
  }
  clearResult();
  auto answer = connection_->request(sql_, [&](pg_conn* conn) {
    return PQsendQueryPrepared(conn, name_.c_str(), params_, values.data(), lengths.data(), formats_.data(), 0);
  });
  if (!answer.isOk()) return answer.status();
  result_ = answer.value();
  rows_ = PQresultStatus(result_) == PGRES_TUPLES_OK ? PQntuples(result_) : 0;
  connection_->noteChanges(result_);
  return Status::ok();
}

Result<bool> PostgresStatement::step() {
  if (!bind_error_.isOk()) return bind_error_;
  if (!executed_) {
    executed_ = true;
    if (Status status = execute(); !status) return status;
  }
  if (row_ + 1 < rows_) {
    ++row_;
    return true;
  }
  return false;
}

void PostgresStatement::reset() {
  clearResult();
  executed_ = false;
  bind_error_ = Status::ok();
  std::fill(is_null_.begin(), is_null_.end(), 1);
}

bool PostgresStatement::columnIsNull(int column) const {
  return result_ == nullptr || row_ < 0 || column >= PQnfields(result_) ||
         PQgetisnull(result_, row_, column) != 0;
}

std::int64_t PostgresStatement::columnInt64(int column) const {
  if (columnIsNull(column)) return 0;
  const char* text = PQgetvalue(result_, row_, column);
  const int size = PQgetlength(result_, row_, column);
  if (size == 1 && (text[0] == 't' || text[0] == 'f')) return text[0] == 't' ? 1 : 0;  // boolean
  std::int64_t value = 0;
  const auto parsed = std::from_chars(text, text + size, value);
  if (parsed.ec == std::errc() && parsed.ptr != text + size && *parsed.ptr == '.') return value;  // numeric
  return parsed.ec == std::errc() ? value : 0;
}

double PostgresStatement::columnDouble(int column) const {
  if (columnIsNull(column)) return 0;
  const char* text = PQgetvalue(result_, row_, column);
  const int size = PQgetlength(result_, row_, column);
  double value = 0;
  // float8out writes the shortest exact form (extra_float_digits 1, PostgreSQL 12+), and
  // "NaN", "Infinity", "-Infinity", which from_chars reads too.
  const auto parsed = std::from_chars(text, text + size, value);
  return parsed.ec == std::errc() ? value : 0;
}

std::string PostgresStatement::columnText(int column) const {
  if (columnIsNull(column)) return {};
  return std::string(PQgetvalue(result_, row_, column),
                     static_cast<std::size_t>(PQgetlength(result_, row_, column)));
}

std::vector<std::uint8_t> PostgresStatement::columnBlob(int column) const {
  if (columnIsNull(column)) return {};
  const char* text = PQgetvalue(result_, row_, column);
  const int size = PQgetlength(result_, row_, column);
  if (size >= 2 && text[0] == '\\' && text[1] == 'x') {  // bytea_output = hex, the default
    std::optional<std::vector<std::uint8_t>> bytes =
        common::fromHex(std::string_view(text + 2, static_cast<std::size_t>(size - 2)));
    return bytes ? std::move(*bytes) : std::vector<std::uint8_t>{};
  }
  return std::vector<std::uint8_t>(text, text + size);  // not bytea: the text's bytes
}

// --- PostgresConnection --------------------------------------------------------------

Result<std::unique_ptr<PostgresConnection>> PostgresConnection::connect(const std::string& url,
                                                                        bool synchronous_commit,
                                                                        StorageHealth& health,
                                                                        PostgresTimeouts timeouts) {
  const std::string location = redactPostgresUrl(url);
  // A URL libpq cannot parse is the operator's typo, not an unreachable server.
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parse_error);
  if (parsed == nullptr) {
    std::string message = "not a PostgreSQL connection URL: " + trimmed(parse_error != nullptr ? parse_error : "");
    PQfreemem(parse_error);
    return Status::make(Status::Code::kInvalidArgument, std::move(message), location, kUrlHint);
  }
  PQconninfoFree(parsed);
  std::string error;
  bool timed_out = false;
  pg_conn* conn = pgio::connectBefore({url}, common::realTimeSource().now() + timeouts.answer, &error, &timed_out);
  if (conn == nullptr) {
    std::string message = "cannot connect: " + trimmed(error.c_str());
    if (timed_out) {
      return Status::make(Status::Code::kUnavailable,
                          message + " within " + std::to_string(timeouts.answer.count()) + " ms", location,
                          kReachHint);
    }
    const bool refused_login = message.find("authentication") != std::string::npos ||
                               message.find("password") != std::string::npos;
    const bool no_database = message.find("does not exist") != std::string::npos;
    // A value libpq checks only when connecting ("invalid integer value … for connection
    // option "port"") is a malformed URL too.
    if (message.find("for connection option") != std::string::npos) {
      return Status::make(Status::Code::kInvalidArgument,
                          "not a PostgreSQL connection URL: " + message.substr(std::string("cannot connect: ").size()),
                          location, kUrlHint);
    }
    if (no_database) {
      return Status::make(Status::Code::kCantOpen, std::move(message), location,
                          "the database in the URL does not exist: create it (createdb) or fix the URL");
    }
    return Status::make(refused_login ? Status::Code::kCantOpen : Status::Code::kUnavailable,
                        std::move(message), location,
                        refused_login ? "check the URL's user and password and pg_hba.conf" : kReachHint);
  }
  std::unique_ptr<PostgresConnection> out(
      new PostgresConnection(url, location, conn, synchronous_commit, health, timeouts));
  if (Status status = out->configureSession(); !status) return status;
  return out;
}

bool PostgresConnection::answers(const std::string& url, std::chrono::milliseconds within) {
  const auto deadline = common::realTimeSource().now() + within;
  std::string error;
  bool timed_out = false;
  pg_conn* conn = pgio::connectBefore({url, "npacd probe"}, deadline, &error, &timed_out);
  if (conn == nullptr) return false;
  pg_result* result = nullptr;
  const pgio::Exchange exchanged =
      pgio::exchange(conn, [](pg_conn* c) { return PQsendQuery(c, "SELECT 1"); }, deadline, &result);
  const bool ok = exchanged == pgio::Exchange::kAnswered && PQresultStatus(result) == PGRES_TUPLES_OK;
  PQclear(result);
  PQfinish(conn);
  return ok;
}

PostgresConnection::PostgresConnection(std::string url, std::string location, pg_conn* conn,
                                       bool synchronous_commit, StorageHealth& health,
                                       PostgresTimeouts timeouts)
    : url_(std::move(url)),
      location_(std::move(location)),
      conn_(conn),
      timeouts_(timeouts),
      synchronous_commit_(synchronous_commit),
      health_(health) {}

PostgresConnection::~PostgresConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

namespace {

// The server's own limits sit below npacd's answer bound, so a server that runs but is
// slow answers with an error (57014 statement_timeout, 55P03 lock_timeout) before npacd
// stops waiting: only a server that does not answer at all trips the bound.
std::chrono::milliseconds serverLimit(std::chrono::milliseconds answer) {
  return std::max(std::chrono::milliseconds(1), answer * 4 / 5);
}

}  // namespace

Status PostgresConnection::configureSession() {
  // Notices (e.g. "relation already exists, skipping") are not errors: keep them out of
  // stderr. synchronous_commit=off is Durability::kNormal: a commit survives npacd's crash
  // but the last ones may be lost if the server itself crashes (PostgreSQL "WAL
  // Configuration"), as with SQLite's synchronous=NORMAL.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  // A row lock held by another session is waited for as long as SQLite waits for the
  // file's lock (the busy timeout), within the answer bound; then kBusy (SQLSTATE 55P03).
  const auto lock_wait = std::min(timeouts_.lock_wait, serverLimit(timeouts_.answer));
  std::string settings = "SET client_min_messages = warning; SET synchronous_commit = " +
                         std::string(synchronous_commit_ ? "on" : "off") +
                         "; SET lock_timeout = " + std::to_string(lock_wait.count());
  if (statements_limited_) {
    settings += "; SET statement_timeout = " + std::to_string(serverLimit(timeouts_.answer).count());
  }
  return execute(settings);
}

Status PostgresConnection::limitStatements() {
  statements_limited_ = true;
  return execute("SET statement_timeout = " + std::to_string(serverLimit(timeouts_.answer).count()));
}

Status PostgresConnection::ensureConnected() {
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) return Status::ok();
  if (transaction_open_ && !beginUnsent()) {
    return Status::make(Status::Code::kUnavailable,
                        "the connection to PostgreSQL was lost inside a transaction; it was rolled back",
                        location_, kReachHint);
  }
  // A server known not to answer is not dialled again by every caller: the probe does.
  if (Status refused = health_.notAnswering(location_); !refused) return refused;
  std::string error;
  bool timed_out = false;
  pg_conn* fresh =
      pgio::connectBefore({url_}, common::realTimeSource().now() + timeouts_.answer, &error, &timed_out);
  if (fresh == nullptr) {
    if (timed_out) return noAnswer("connecting");
    Status status = Status::make(Status::Code::kUnavailable,
                                 "the connection to PostgreSQL is lost and reconnecting failed: " + trimmed(error.c_str()),
                                 location_, kReachHint);
    health_.reportFailure(status);
    return status;
  }
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = fresh;
  ++session_;  // every prepared statement is gone with the old session
  return configureSession();
}

Status PostgresConnection::noAnswer(std::string_view context) {
  if (conn_ != nullptr) PQfinish(conn_);  // its state is unknown: never reused
  conn_ = nullptr;
  std::string message = "no answer within " + std::to_string(timeouts_.answer.count()) + " ms (in: ";
  message.append(context.substr(0, 120));
  message += ")";
  if (context == "COMMIT") {
    message += "; the transaction's outcome is unknown: the server may still commit it when it runs again";
  }
  Status status = Status::make(Status::Code::kUnavailable, std::move(message), location_,
                               "the PostgreSQL server is stopped, hung or cut off: check it (pg_isready -d <url>, "
                               "its host's load and network); npacd resumes by itself when it answers");
  health_.reportNotAnswering(
      status, [url = url_, within = timeouts_.answer] { return answers(url, within); }, timeouts_.probe_interval);
  return status;
}

Status PostgresConnection::refusedNow() { return health_.notAnswering(location_); }

Result<pg_result*> PostgresConnection::request(std::string_view context, const std::function<int(pg_conn*)>& send) {
  if (Status refused = refusedNow(); !refused) return refused;
  if (Status status = ensureConnected(); !status) return status;
  pg_result* result = nullptr;
  ++requests_;
  const auto deadline = common::realTimeSource().now() + timeouts_.answer;
  std::vector<std::string> ahead;
  ahead.swap(with_next_);  // on the wire now, whatever the outcome
  const pgio::Exchange exchanged = ahead.empty() ? pgio::exchange(conn_, send, deadline, &result)
                                                 : pgio::exchangePipelined(conn_, ahead, send, deadline, &result);
  switch (exchanged) {
    case pgio::Exchange::kNoAnswer:
      return noAnswer(context);
    case pgio::Exchange::kLost:
      return errorStatus(nullptr, context);
    case pgio::Exchange::kAnswered:
      break;
  }
  const ExecStatusType state = PQresultStatus(result);
  if (state == PGRES_COMMAND_OK || state == PGRES_TUPLES_OK) return result;
  Status status = errorStatus(result, context);
  PQclear(result);
  return status;
}

Status PostgresConnection::prepareOnServer(const std::string& name, const std::string& sql, int params) {
  auto done = request(sql, [&](pg_conn* conn) { return PQsendPrepare(conn, name.c_str(), sql.c_str(), params, nullptr); });
  if (!done.isOk()) return done.status();
  PQclear(done.value());
  return Status::ok();
}

Result<pg_result*> PostgresConnection::requestText(std::string_view sql) {
  std::string text;
  for (const std::string& statement : with_next_) text += statement + "; ";
  with_next_.clear();
  text.append(sql);
  return request(sql, [&](pg_conn* conn) { return PQsendQuery(conn, text.c_str()); });
}

void PostgresConnection::sendWithNext(std::string statement) { with_next_.push_back(std::move(statement)); }

Status PostgresConnection::commit() {
  if (beginUnsent()) {
    with_next_.clear();  // an empty transaction: nothing reached the server
    return Status::ok();
  }
  return execute("COMMIT");
}

Status PostgresConnection::rollback() {
  const bool unsent = beginUnsent();
  with_next_.clear();
  return unsent ? Status::ok() : execute("ROLLBACK");
}

void PostgresConnection::rollbackTo(const std::string& name) {
  const std::string savepoint = "SAVEPOINT " + name;
  for (std::size_t i = 0; i < with_next_.size(); ++i) {
    if (with_next_[i] == savepoint) {  // nothing after it was sent either
      with_next_.resize(i);
      return;
    }
  }
  with_next_.clear();  // only savepoints inside this one, undone with it
  // Failing, the connection is lost or the transaction aborted: the whole transaction is
  // rolled back by the server, which is more than this savepoint.
  (void)execute("ROLLBACK TO " + name);
  (void)execute("RELEASE " + name);
}

Status PostgresConnection::execute(std::string_view sql) {
  auto done = requestText(sql);
  if (!done.isOk()) return done.status();
  noteChanges(done.value());
  PQclear(done.value());
  return Status::ok();
}

Status PostgresConnection::executeScript(const std::string& sql) { return execute(sql); }

Result<std::unique_ptr<PostgresStatement>> PostgresConnection::prepare(std::string_view sql) {
  int count = 0;
  const std::string text = numberPlaceholders(sql, &count);
  std::string name = "npac_" + std::to_string(++next_name_);
  if (Status status = prepareOnServer(name, text, count); !status) return status;
  return std::make_unique<PostgresStatement>(this, std::string(sql), std::move(name), count);
}

Result<std::int64_t> PostgresConnection::lastInsertId() {
  auto done = requestText("SELECT lastval()");
  if (!done.isOk()) return done.status();
  pg_result* result = done.value();
  if (PQntuples(result) != 1) {
    PQclear(result);
    return Status::internal("SELECT lastval() returned no row");
  }
  const std::int64_t id = std::strtoll(PQgetvalue(result, 0, 0), nullptr, 10);
  PQclear(result);
  return id;
}

bool PostgresConnection::inTransaction() const {
  if (beginUnsent()) return true;
  const PGTransactionStatusType state = PQtransactionStatus(conn_);
  return state == PQTRANS_INTRANS || state == PQTRANS_INERROR || state == PQTRANS_ACTIVE;
}

bool PostgresConnection::transactionFailed() const { return PQtransactionStatus(conn_) == PQTRANS_INERROR; }

void PostgresConnection::noteChanges(const pg_result* result) {
  const char* tag = PQcmdStatus(const_cast<pg_result*>(result));
  if (tag == nullptr) return;
  const std::string_view command(tag);
  if (startsWith(command, "INSERT") || startsWith(command, "UPDATE") || startsWith(command, "DELETE")) {
    changes_ = std::strtoll(PQcmdTuples(const_cast<pg_result*>(result)), nullptr, 10);
  }
}

Status PostgresConnection::errorStatus(const pg_result* result, std::string_view context) {
  std::string message;
  const char* sqlstate = nullptr;
  if (result != nullptr) {
    message = trimmed(PQresultErrorMessage(result));
    sqlstate = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  }
  if (message.empty()) message = trimmed(PQerrorMessage(conn_));
  if (!context.empty()) {
    message += " (in: ";
    message.append(context.substr(0, 120));
    message += ")";
  }
  Status status = PQstatus(conn_) != CONNECTION_OK || sqlstate == nullptr
                      ? Status::make(PQstatus(conn_) != CONNECTION_OK ? Status::Code::kUnavailable
                                                                      : Status::Code::kInternal,
                                     std::move(message), location_, kReachHint)
                      : statusFromSqlstate(sqlstate, std::move(message), location_);
  health_.reportFailure(status);
  return status;
}

}  // namespace npac::db
