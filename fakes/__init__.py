"""Stand-ins that survive a restart: a scripted model, protected actions with a ledger, stores.

Nothing here knows which framework drives it; each target adapts these cores to its SDK.
"""
