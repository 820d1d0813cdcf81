"""Model provider adapters, one subpackage per provider (each needs its SDK extra)."""
