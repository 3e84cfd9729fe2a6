"""Scale-out backends. Import them only through their functions: the core never imports Ray."""
