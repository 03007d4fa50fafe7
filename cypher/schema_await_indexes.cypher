// name: schema_await_indexes
// returns: nothing
// purpose: waits until every index is online, so the first queries after startup use them
CALL db.awaitIndexes(300)
