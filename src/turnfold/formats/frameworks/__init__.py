"""Run objects and saved states of agent frameworks (spec §16 A-1, issue 22): what an agent
built in a notebook leaves behind, such as the OpenAI Agents SDK's run items and its saved run
state.

Each module is one framework's format; where the framework's items carry a provider's messages
(the Agents SDK's Responses items) it reuses that provider's conversion rather than a copy.
"""
