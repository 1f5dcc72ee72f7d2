#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# A WebSocket server that misbehaves, for t/attack/ws_peers.sh: the peer of
# the worker (a ws:// upstream) or of mcpctl connect (the gateway), with
# the standard library only.  It listens on 127.0.0.1, prints "listening
# PORT", takes any number of connections (subprotocol "mcp"), answers
# pings, and exits on SIGTERM or after 5 minutes.
#
#   ws_peer.py upstream   an MCP server: initialize, tools/list and ping are
#                         answered; its tools are echo {text}, flood
#                         {count}, drip {most} and deaf (the connection
#                         is no longer read)
#   ws_peer.py gateway ATTACK [ARG]
#                         after the first text message from its client,
#                         runs ATTACK (flood COUNT, or drip MOST)
#   ws_peer.py blackhole  accepts nothing, its backlog full of its own
#                         connections: a connection to it waits for a
#                         SYN-ACK that never comes, as one to a host that
#                         drops packets does
#
# flood: a text message of COUNT fragments of one byte ("x") and no final
# one, then the connection is closed 2 s later.  drip: the start of a text
# message ("{"), then a fragment of one byte every second, at most MOST,
# until the peer closes; then the connection is closed.
import base64
import hashlib
import json
import socket
import sys
import threading
import time

GUID = b'258EAFA5-E914-47DA-95CA-C5AB0DC85B11'


class Conn:
    def __init__(self, s):
        self.s = s
        self.buf = b''
        self.lock = threading.Lock()
        self.gone = threading.Event()
        self.attacking = False	# its message is the only one sent

    def handshake(self):
        while b'\r\n\r\n' not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk or len(self.buf) > 65536:
                return False
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b'\r\n\r\n')
        key = b''
        for line in head.split(b'\r\n')[1:]:
            name, _, value = line.partition(b':')
            if name.strip().lower() == b'sec-websocket-key':
                key = value.strip()
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        self.s.sendall(b'HTTP/1.1 101 Switching Protocols\r\n'
                       b'Upgrade: websocket\r\nConnection: Upgrade\r\n'
                       b'Sec-WebSocket-Accept: ' + accept + b'\r\n'
                       b'Sec-WebSocket-Protocol: mcp\r\n\r\n')
        return True

    @staticmethod
    def frame(op, payload, fin=True):
        n = len(payload)
        b0 = (0x80 if fin else 0) | op
        if n < 126:
            return bytes([b0, n]) + payload
        if n < 65536:
            return bytes([b0, 126]) + n.to_bytes(2, 'big') + payload
        return bytes([b0, 127]) + n.to_bytes(8, 'big') + payload

    def send(self, data):
        with self.lock:
            self.s.sendall(data)

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk

    def read_frame(self):
        """One frame from the client, unmasked: (opcode, fin, payload)."""
        self._need(2)
        fin, op = self.buf[0] & 0x80, self.buf[0] & 0x0f
        n, off = self.buf[1] & 0x7f, 2
        if n == 126:
            self._need(4)
            n, off = int.from_bytes(self.buf[2:4], 'big'), 4
        elif n == 127:
            self._need(10)
            n, off = int.from_bytes(self.buf[2:10], 'big'), 10
        masked = self.buf[1] & 0x80
        key = b''
        if masked:
            self._need(off + 4)
            key, off = self.buf[off:off + 4], off + 4
        self._need(off + n)
        data = self.buf[off:off + n]
        self.buf = self.buf[off + n:]
        if masked:
            data = bytes(c ^ key[i % 4] for i, c in enumerate(data))
        return op, fin, data

    def messages(self):
        """Text messages from the client; pings answered, close ends."""
        parts = []
        while True:
            op, fin, data = self.read_frame()
            if op == 9:
                self.send(Conn.frame(10, data))
                continue
            if op == 8:
                return
            if op in (1, 0):
                parts.append(data)
                if fin:
                    yield b''.join(parts).decode('utf-8', 'replace')
                    parts = []

    def flood(self, count):
        block = Conn.frame(0, b'x', fin=False) * 65536
        sent = 0
        try:
            self.send(Conn.frame(1, b'x', fin=False))
            sent = 1
            while sent < count and not self.gone.is_set():
                n = min(65536, count - sent)
                self.send(block[:n * 3])
                sent += n
            time.sleep(2)
        except OSError:
            pass
        self.close()

    def drip(self, most):
        try:
            self.send(Conn.frame(1, b'{', fin=False))
            for _ in range(most):
                if self.gone.wait(1):
                    break
                self.send(Conn.frame(0, b'x', fin=False))
        except OSError:
            pass
        self.close()

    def pings(self, count):
        """Pings of 125 bytes, never reading the pongs; given up when
        the client has read nothing for 3 s (it stopped reading)."""
        block = Conn.frame(9, b'p' * 125) * 512
        sent = 0
        self.s.settimeout(3)
        try:
            while sent < count and not self.gone.is_set():
                n = min(512, count - sent)
                self.send(block[:n * 127])
                sent += n
            time.sleep(2)
        except OSError:
            pass
        print('pings sent %d' % sent, flush=True)
        self.close()

    def close(self):
        self.gone.set()
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def attack(conn, what, arg):
    conn.attacking = True
    fn = {'flood': conn.flood, 'drip': conn.drip, 'pings': conn.pings}[what]
    threading.Thread(target=fn, args=(arg,), daemon=True).start()


def reply(conn, mid, result):
    # A frame of another message would break the one being sent.
    if conn.attacking:
        return
    conn.send(Conn.frame(1, json.dumps(
        {'jsonrpc': '2.0', 'id': mid, 'result': result},
        separators=(',', ':')).encode()))


TOOLS = [{'name': name, 'description': name,
          'inputSchema': {'type': 'object'}}
         for name in ('echo', 'flood', 'drip', 'deaf')]


def serve_upstream(conn):
    for text in conn.messages():
        try:
            m = json.loads(text)
        except ValueError:
            continue
        if 'id' not in m or 'method' not in m:
            continue
        method, mid = m['method'], m['id']
        params = m.get('params') or {}
        args = params.get('arguments') or {}
        if method == 'initialize':
            reply(conn, mid, {'protocolVersion': '2025-11-25',
                              'capabilities': {'tools': {}},
                              'serverInfo': {'name': 'ws-peer',
                                             'version': '1'}})
        elif method == 'tools/list':
            reply(conn, mid, {'tools': TOOLS})
        elif method == 'ping':
            reply(conn, mid, {})
        elif method == 'tools/call' and params.get('name') == 'echo':
            reply(conn, mid, {'content': [{'type': 'text',
                                           'text': args.get('text', '')}]})
        elif method == 'tools/call' and params.get('name') == 'flood':
            attack(conn, 'flood', int(args.get('count', 1000)))
        elif method == 'tools/call' and params.get('name') == 'drip':
            attack(conn, 'drip', int(args.get('most', 90)))
        elif method == 'tools/call' and params.get('name') == 'deaf':
            # Read nothing more, answer nothing more, until it goes.
            conn.gone.wait(300)
            return
        elif not conn.attacking:
            conn.send(Conn.frame(1, json.dumps(
                {'jsonrpc': '2.0', 'id': mid, 'error': {
                    'code': -32601, 'message': 'Method not found'}},
                separators=(',', ':')).encode()))


def serve_gateway(conn, what, arg):
    for _ in conn.messages():
        attack(conn, what, arg)
        break
    if what == 'pings':
        conn.gone.wait(300)
        return
    for _ in conn.messages():
        pass


def handle(s, argv):
    conn = Conn(s)
    try:
        s.settimeout(None)
        if not conn.handshake():
            return
        if argv[0] == 'upstream':
            serve_upstream(conn)
        else:
            serve_gateway(conn, argv[1], int(argv[2]) if len(argv) > 2 else 90)
    except (EOFError, OSError):
        pass
    finally:
        conn.gone.set()
        time.sleep(0.1)
        s.close()


def blackhole():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(('127.0.0.1', 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    held = []
    for _ in range(3):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(('127.0.0.1', port))
        except BlockingIOError:
            pass
        held.append(c)
    time.sleep(0.2)
    print('listening %d' % port, flush=True)
    time.sleep(300)


def main():
    argv = sys.argv[1:]
    if argv == ['blackhole']:
        blackhole()
        return
    if not argv or argv[0] not in ('upstream', 'gateway') or \
            (argv[0] == 'gateway' and (len(argv) < 2 or
                                       argv[1] not in ('flood', 'drip', 'pings'))):
        sys.exit('usage: ws_peer.py upstream | blackhole | gateway flood|drip|pings [N]')
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', 0))
    ls.listen(16)
    print('listening %d' % ls.getsockname()[1], flush=True)
    ls.settimeout(1)
    end = time.monotonic() + 300
    while time.monotonic() < end:
        try:
            s, _ = ls.accept()
        except socket.timeout:
            continue
        except OSError:
            break
        threading.Thread(target=handle, args=(s, argv), daemon=True).start()


if __name__ == '__main__':
    main()
