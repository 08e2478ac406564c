"""tinyagents: a toy agent framework, standing in for an SDK that ships a harness target."""

__version__ = "0.1.0"
