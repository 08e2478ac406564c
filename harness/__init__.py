"""A conformance harness for nested (agent-as-tool) interrupt semantics in agent SDKs."""

__version__ = "0.1.0"
