"""Environments: catalog of ids, Ray registration, wrappers and our own games."""
