"""The result cache: what a result depends on (``key``) and where it is stored (``store``)."""
