"""The collision checker's compiled core: its model and workspace as records, states,
front lists, self pairs and certified edges."""
