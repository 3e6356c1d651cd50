"""aiocoap's EDHOC (with lakers-python) as the peer of tests/interop_edhoc.rs.

`client URI` GETs URI after an EDHOC handshake with the server at its authority, with the
RFC 9529 section 3 Initiator credential (kid 2b) trusting lakers' test Responder one (kid 0a), message_3
sent on its own (not combined with the request, RFC 9668); prints "code C" and
"payload P" lines. `client-combined URI` does the same with aiocoap's default, message_3 in
the EDHOC option's request, the first OSCORE one (RFC 9668 section 3). `server` serves /hello on 127.0.0.1 to EDHOC peers holding the Initiator
credential, as the Responder (kid 0a), and says `listening on 127.0.0.1:PORT (coap)` on stderr.
"""

import asyncio
import sys

import cbor2
from aiocoap import GET, Context, Message, resource
from aiocoap.credentials import CredentialsMap
from aiocoap.oscore_sitewrapper import OscoreSiteWrapper

CRED_I = bytes.fromhex(
    "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820"
    "ac75e9ece3e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de61138"
    "8a4b8a8211334ac7d37ecb52a387d257e6db3c2a93df21ff3affc8"
)
CRED_R = bytes.fromhex(
    "a2026008a101a5010202410a2001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcb"
    "ac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eab"
    "f6072"
)
I = bytes.fromhex("fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b")


async def client(uri, combined=False):
    ctx = await Context.create_client_context()
    authority = uri.split("/", 3)
    ctx.client_credentials.load_from_dict(
        {
            "/".join(authority[:3]) + "/*": {
                "edhoc-oscore": {
                    "suite": 2,
                    "method": 3,
                    "use_combined_edhoc": combined,
                    "own_cred_style": "by-key-id",
                    "own_cred": {14: cbor2.loads(CRED_I)},
                    "private_key": {1: 2, -1: 1, -4: I},
                    "peer_cred": {14: cbor2.loads(CRED_R)},
                }
            }
        }
    )
    response = await ctx.request(Message(code=GET, uri=uri)).response
    print(f"code {response.code.dotted}")
    print(f"payload {response.payload.decode(errors='replace')}")
    await ctx.shutdown()


R = bytes.fromhex("72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac")


class Hello(resource.Resource):
    async def render_get(self, request):
        return Message(payload=b"Hello over EDHOC from aiocoap")


def bound_port(context):
    # aiocoap 0.4.17 does not say which port binding to port 0 got; its UDP socket does.
    interface = context.request_interfaces[0].token_interface.message_interface
    return interface.transport.get_extra_info("socket").getsockname()[1]


async def server():
    root = resource.Site()
    root.add_resource(["hello"], Hello())
    credentials = CredentialsMap()
    context = await Context.create_server_context(
        OscoreSiteWrapper(root, credentials),
        bind=("127.0.0.1", 0),
        transports=["udp6"],
    )
    port = bound_port(context)
    credentials.load_from_dict(
        {
            # aiocoap finds the server's own credential by the origin requests name.
            f"coap://127.0.0.1:{port}/*": {
                "edhoc-oscore": {
                    "suite": 2,
                    "method": 3,
                    "own_cred_style": "by-key-id",
                    "own_cred": {14: cbor2.loads(CRED_R)},
                    "private_key": {1: 2, -1: 1, -4: R},
                    "peer_cred": {14: cbor2.loads(CRED_I)},
                }
            }
        }
    )
    print(f"listening on 127.0.0.1:{port} (coap)", file=sys.stderr, flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    if sys.argv[1] == "client":
        asyncio.run(client(sys.argv[2]))
    elif sys.argv[1] == "client-combined":
        asyncio.run(client(sys.argv[2], combined=True))
    elif sys.argv[1] == "server":
        asyncio.run(server())
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
