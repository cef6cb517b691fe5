"""Lengths declared once: the column, the service's check and the API schema all read them."""
from __future__ import annotations

#: The longest a space's name may be (characters).
SPACE_NAME_MAX = 128
#: The longest a space's description may be (characters).
SPACE_DESCRIPTION_MAX = 4096
