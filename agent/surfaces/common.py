"""What every surface needs besides rendering: the tools that load, the model endpoint, the first prompt."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.loop import Agent
from tools.catalog import CATALOG
from tools.contract import Tool, load


def available_tools() -> list[Tool]:
    """Every catalog tool whose module imports; a broken one is reported, not fatal.

    A surface that serves many people (Slack) or an IDE (MCP, ACP) should not die because one
    tool's optional dependency is missing.
    """
    tools = []
    for entry in CATALOG:
        try:
            tools.append(load(entry))
        except Exception as error:  # an import error of any kind takes out that tool only
            print(f"rlpilot: {entry.name} is unavailable ({type(error).__name__}: {error})", file=sys.stderr)
    return tools


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", help="an OpenAI-compatible API, e.g. http://localhost:8000/v1")
    parser.add_argument("--model", help="the model name at that API")
    parser.add_argument("--api-key-var", default="OPENAI_API_KEY", help="the variable holding its key")
    parser.add_argument("--endpoint", help="an alias from configs/endpoints.toml")


def endpoint_of(options: argparse.Namespace, workspace: Path):
    """The model endpoint the options name, or None (offline). Raises BadInput on a bad alias."""
    from agent.model import resolve_endpoint

    return resolve_endpoint(workspace, options.base_url, options.model, options.endpoint, options.api_key_var)


def start_conversation(agent: Agent) -> None:
    """Give a new session its system prompt, written for the stack installed in the workspace."""
    if agent.client is None or agent.session.messages():
        return
    from prompts import system_prompt

    stack_tool = agent.tools["stack_info"]
    stack = stack_tool.func(stack_tool.parse({}), agent.ctx)
    agent.session.add_message({"role": "system", "content": system_prompt(stack.brief(), stack.config_dialect.dialect)})
