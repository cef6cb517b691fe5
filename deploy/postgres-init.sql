-- Run once by the postgres image on an empty volume: the UnitStore gets its own database
-- (it is never joined with the product database). The product database is POSTGRES_DB.
CREATE DATABASE wharf_units OWNER wharf;
