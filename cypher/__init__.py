"""The Cypher statements: one file each, shipped as package data of `service.cypher`
(pyproject.toml maps this folder to it) and loaded by service/store/queries.py."""
