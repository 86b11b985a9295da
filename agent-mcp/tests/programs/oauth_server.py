"""An OAuth-protected MCP server written with the official Python MCP SDK (PyPI `mcp`), for
agent-mcp's tests/oauth/ and the eugene CLI's tests/eugene_mcp.rs.

Usage: python oauth_server.py LOG_FILE

Listens on 127.0.0.1 at a port the system picks and prints `READY http://127.0.0.1:PORT/mcp`.
The SDK hosts the authorization server (/authorize, /token, /register, the metadata documents)
and requires a bearer token on /mcp. Its provider, in memory, approves every authorization at
once: /authorize redirects straight to the client's redirect_uri with a code and the client's
state. Refreshing rotates both tokens (the old ones stop working). Tools: `whoami` (the client id
the token was issued to) and `add`.

Every HTTP request is appended to LOG_FILE as a JSON line {"method", "path", "authorization"}
(the Authorization header as sent, or null), and so is every grant the provider makes
({"event": "code" | "token" | "refresh", ...}), so a test can see what reached the server.
"""

import asyncio
import json
import secrets
import socket
import sys
import time

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

ACCESS_TTL = 3600
LOG = None


def log(**fields):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields) + "\n")


class Provider:
    """An in-memory authorization server that approves everyone."""

    def __init__(self):
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info
        log(event="register", client_id=client_info.client_id)

    async def authorize(self, client, params: AuthorizationParams):
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        log(event="code", client_id=client.client_id)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        code = self.codes.get(authorization_code)
        if code is None or code.client_id != client.client_id:
            return None
        return code

    def issue(self, client_id, scopes, resource):
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + ACCESS_TTL,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=ACCESS_TTL,
            scope=" ".join(scopes) or None,
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        token = self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)
        log(event="token", client_id=client.client_id, access=token.access_token)
        return token

    async def load_refresh_token(self, client, refresh_token):
        token = self.refresh.get(refresh_token)
        if token is None or token.client_id != client.client_id:
            log(event="refresh-refused", client_id=client.client_id)
            return None
        return token

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError(error="invalid_grant", error_description="refresh token not found")
        for access in [a for a, t in self.access.items() if t.client_id == client.client_id]:
            del self.access[access]
        token = self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)
        log(event="refresh", client_id=client.client_id, access=token.access_token)
        return token

    async def load_access_token(self, token):
        access = self.access.get(token)
        if access is None or (access.expires_at and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class LogRequests:
    """ASGI middleware: one log line per HTTP request."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            authorization = headers.get(b"authorization")
            log(
                method=scope["method"],
                path=scope["path"],
                authorization=authorization.decode() if authorization else None,
            )
        await self.app(scope, receive, send)


def main():
    global LOG
    LOG = sys.argv[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before READY: connections wait in the backlog until uvicorn accepts them.
    sock.listen(64)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    server = MCPServer(
        "oauth-test-server",
        log_level="WARNING",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
            ),
            required_scopes=["mcp"],
        ),
    )

    @server.tool()
    def whoami() -> str:
        """The client id the request's token was issued to."""
        token = get_access_token()
        return f"client {token.client_id}" if token else "nobody"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    app = LogRequests(server.streamable_http_app(host="127.0.0.1"))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"READY {base}/mcp", flush=True)
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
