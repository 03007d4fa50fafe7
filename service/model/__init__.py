"""The ledger's pure model: the kinds, the records, content blocks and every rule for a
stored value. No Neo4j here; store/ builds on it and so does every other part."""
