"""minik8s controllers."""
