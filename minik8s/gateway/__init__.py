"""The serverless gateway (``minik8s gateway``): the entry point for function calls, workflow runs and events."""
