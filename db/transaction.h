// Transaction: a scope that rolls back unless committed.
//
//   Transaction txn(db);
//   if (Status s = txn.begin(); !s) return s;
//   ... writes ...
//   return txn.commit();   // leaving the scope without commit() rolls everything back
//
// The outermost Transaction on a connection issues BEGIN IMMEDIATE (the write lock is
// taken up front, so two writers never deadlock upgrading a read lock); a Transaction
// begun while another is open on the same connection becomes a SAVEPOINT, so stores can
// use transactions internally and callers can still wrap several stores' writes (for
// example a tunable override and its audit entry) in one atomic unit.
//
// On PostgreSQL, BEGIN, SAVEPOINT and RELEASE are not round trips of their own: they
// travel with the next statement (PostgresConnection::sendWithNext), so a transaction
// of k savepoint-wrapped writes costs k + 1 round trips instead of 3k + 2. A transaction
// in which no statement ran costs none.
//
// Threading: same as its Database. Not copyable or movable; nest strictly (LIFO).
#pragma once

#include <string>

#include "db/status.h"

namespace npac::db {

class Database;

class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status begin();
  Status commit();
  void rollback();
  bool isActive() const { return active_; }

 private:
  Status finished();  // the bookkeeping of a successful commit

  Database& db_;
  bool active_ = false;
  int depth_ = 0;  // 0 = outermost (BEGIN), n > 0 = SAVEPOINT npac_n
};

}  // namespace npac::db
