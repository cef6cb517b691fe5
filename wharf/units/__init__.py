"""Units: unit resources (``create_resource``), reading units and applying changesets.
"""
