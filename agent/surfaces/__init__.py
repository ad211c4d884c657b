"""The ways in: terminal chat (agent.chat with agent.surfaces.terminal), Slack, MCP and ACP.

Each renders the same agent events and asks the same gate questions its own way.
"""
