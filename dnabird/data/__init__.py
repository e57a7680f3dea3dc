"""The genome data path: manifests and fetching, corpus, tokenizer, token shards."""
