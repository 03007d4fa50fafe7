// name: bench_fulltext_index
// returns: one row {id} of the index named $name
// purpose: bench-only: the id of a full-text index, which names its Lucene directory under the store (workload 17 measures its files)
// params: name
SHOW INDEXES YIELD id, name, type
WHERE name = $name AND type = 'FULLTEXT'
RETURN id
