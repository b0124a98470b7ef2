"""Cluster files (cluster/*.yaml) read without Ray: their node types, and whether a spec's
`resources:` fits them (`rlp validate --cluster FILE`, docs/cluster.md)."""
