"""An ariadne-codegen plugin (regenerate.py loads it): the generated models' annotations
name their classes instead of quoting them, under `from __future__ import annotations`.

Why: on Python 3.11 `Optional["Base64Input"]` is one cached object in the whole process,
its ForwardRef too, and whoever evaluates that first fixes what it means for everyone. The
service's strawberry types quote the same names (they are the schema's), so a process that
imported the client first built a schema of the client's pydantic models. Unquoted, the
client never makes those objects."""
from __future__ import annotations

import ast

from ariadne_codegen.plugins.base import Plugin


class UnquotedAnnotations(Plugin):
    def generate_inputs_module(self, module: ast.Module) -> ast.Module:
        return unquoted(module)

    def generate_result_types_module(self, module: ast.Module, operation_definition) -> ast.Module:
        return unquoted(module)

    def generate_fragments_module(self, module: ast.Module, fragments_definitions) -> ast.Module:
        return unquoted(module)


def unquoted(module: ast.Module) -> ast.Module:
    for node in ast.walk(module):
        if isinstance(node, ast.AnnAssign):
            node.annotation = _Unquote().visit(node.annotation)
    future = ast.ImportFrom(module="__future__", names=[ast.alias(name="annotations")], level=0)
    module.body.insert(0, future)
    return module


class _Unquote(ast.NodeTransformer):
    """Quoted class names in an annotation become names; Literal[...] and the arguments of
    calls (Field(discriminator="…")) keep their strings."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "Literal":
            return node
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        # The generator writes a forward reference as a Name whose id holds the quotes.
        if node.id[:1] in "'\"" and node.id[1:-1].isidentifier():
            return ast.Name(id=node.id[1:-1], ctx=ast.Load())
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and node.value.isidentifier():
            return ast.Name(id=node.value, ctx=ast.Load())
        return node
