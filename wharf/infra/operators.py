"""Operators: the accounts ``WHARF_OPERATORS`` names, who run the deployment.

Rules:

- An operator is a *user* principal whose username (case-insensitive) is listed in
  ``WHARF_OPERATORS``. The list is empty by default: nobody operates.
- Through a login session an operator always operates. Through an API token only when the
  token carries every token scope (``read`` and ``write``): a narrow token (read-only, for
  a script that polls its own work) stays an ordinary user's token, so a leaked read token
  does not open every user's operations. The request's own scope check (read for safe
  methods, write for the others) applies on top, as for any request.
- Operators may read any user's operation and its attempts, and retry or cancel it, through
  the ordinary operations endpoints; listing operations stays per actor. An operation acted
  on by an operator still executes as its original actor (its permissions are re-checked
  as that actor's).
- What only operators may see (the dashboard's *data*) is refused to everyone else with
  404 ``not_found`` by :func:`require_operator`, never 403. That the dashboard *exists* is
  not hidden: its routes are in the OpenAPI document, other methods answer 405, and its
  script and stylesheet (no data in them; the anonymous login form needs the script) are
  served to anyone.
"""
from __future__ import annotations

from storage.enums import TokenScope, values
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import NotFound
from wharf.infra.settings import Settings

#: The scopes an API token needs to act as its operator's (all of them).
OPERATOR_TOKEN_SCOPES = frozenset(values(TokenScope))


def is_operator(settings: Settings, principal: Principal) -> bool:
    """Whether ``principal`` acts as an operator (see the module's rules)."""
    if not principal.is_user or not principal.username or not settings.operators:
        return False
    name = principal.username.lower()
    if all(name != operator.lower() for operator in settings.operators):
        return False
    if principal.token_id is not None:
        return principal.scopes is not None and principal.scopes >= OPERATOR_TOKEN_SCOPES
    return True


def require_operator(settings: Settings, ctx: RequestContext) -> None:
    """Refuse anyone but an operator with 404 (no operator data, and no 403 that would
    tell a user which accounts are operators)."""
    if not is_operator(settings, ctx.principal):
        raise NotFound("Not found.")
