"""Observes a CoAP resource with aiocoap, then cancels the observation.

Usage: aiocoap_observe.py URI COUNT

Prints "registered: PAYLOAD" for the registration's answer and "notification: PAYLOAD" for
each of COUNT notifications, then cancels the observation (aiocoap forgets the token and
rejects the next notification with RST), lingers long enough for that to happen, and exits 0.

aiocoap-client --observe cannot be used for this: from aiocoap 0.4.12 on it cancels the
observation as soon as the first response has arrived.
"""

import asyncio
import sys

import aiocoap


async def main(uri, count):
    context = await aiocoap.Context.create_client_context()
    request = aiocoap.Message(code=aiocoap.GET, uri=uri, observe=0)
    requester = context.request(request)
    first = await requester.response
    print(f"registered: {first.code} {first.payload.decode()}", flush=True)
    seen = 0
    async for notification in requester.observation:
        print(f"notification: {notification.code} {notification.payload.decode()}", flush=True)
        seen += 1
        if seen == count:
            break
    requester.observation.cancel()
    print("cancelled", flush=True)
    # Stay up until the server has sent at least one more notification, which aiocoap
    # now rejects.
    await asyncio.sleep(1.5)
    await context.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
