"""The rule-agnostic semantic layer: source views, scopes, resolution, guards, the module model."""
