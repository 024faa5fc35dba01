"""Day-two operations on a deployed stack: status, offboarding, key migration, upgrades, bootstrap."""
