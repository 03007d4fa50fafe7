"""ctxdag: a Neo4j-backed ledger of LLM conversations."""
