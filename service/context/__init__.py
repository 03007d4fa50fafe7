"""The view: what the model reads (render), compaction, the token budget, summarizers."""
