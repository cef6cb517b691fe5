"""The kind of the units capability: ``create_resource`` (a unit resource), its payload and
result, declared once here (``wharf.operations.registry``)."""
from __future__ import annotations

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

CREATE_RESOURCE = "create_resource"


class CreateResourcePayload(Shape, frozen=True):
    """The new unit resource, its ids fixed at submission."""

    space_id: str
    parent_id: str | None
    name: str
    unit_type: str
    node_id: str
    resource_id: str
    unit_id: str


class CreateResourceResult(Shape, frozen=True):
    node_id: str
    resource_id: str
    unit_id: str



def _create_resource(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.units.resources import CreateResource
    return CreateResource(c.unitstore)


register(KindSpec(
    name=CREATE_RESOURCE, payload=CreateResourcePayload, result=CreateResourceResult,
    handler=_create_resource,
    doc="``create_resource``: a unit resource (POST /api/resources).",
    result_doc="Once completed: the new node, resource and unit."))
