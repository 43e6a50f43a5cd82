// (filled in by the owner of this module)
