#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Raw-socket clients for the attack suite (t/attack/): what curl cannot
# send, or cannot send slowly, or cannot stop reading.  Standard library
# only.  Every loop is bounded, every socket is on the address given (the
# tests give 127.0.0.1), and every socket is closed on exit.
#
#   client.py send ADDR ACTION...
#       Run the actions on one connection, then read until the peer closes
#       or --timeout seconds pass without data; write what was received to
#       stdout.  Actions: s:TEXT sends TEXT (Python escapes: \r \n \x00),
#       f:FILE sends a file, p:MS sleeps, b:TEXT sends TEXT a byte per
#       packet, shut half-closes, r:SECS reads for SECS seconds.
#   client.py trickle ADDR PREFIX MAX
#       Send PREFIX, then one byte ("a") a second, at most MAX of them,
#       until the peer answers or closes; print "status=S elapsed=E sent=N
#       closed=C", E counted from the first byte sent.
#   client.py silent ADDR MAX
#       Connect and send nothing; print "status=S elapsed=E closed=C" when
#       the peer closes, or after MAX seconds.
#   client.py hold ADDR N READY STOP [--request TEXT] [--timeout S]
#       Open N connections (as many as fit under the descriptor limit
#       raised to its hard limit), optionally send TEXT on each and read
#       its answer's head; half a second later write to the file READY how
#       many were opened and what the peer did with them (held, closed,
#       or the status it answered), hold them until the file STOP exists
#       (at most S seconds), close them and print a summary.
#   client.py stall ADDR READY STOP TEXT... [--timeout S]
#       For each TEXT (an HTTP request) open a connection with a tiny
#       receive buffer, send it, read the first 64 bytes of the answer and
#       nothing more; write "stalled=N" to READY, hold them until STOP
#       exists (at most S seconds) and print a summary.
#   client.py ws ADDR ACTION...
#       A WebSocket client (RFC 6455) with a 4 KiB receive buffer.  up
#       [HEADER...] upgrades /ws (HEADER like "Origin: x" adds or, with an
#       empty value, removes a header) and prints the status line; text:T
#       sends T in a masked text frame; frame:OP:FLAGS:PAYLOAD sends any
#       frame (FLAGS, comma-separated: nofin, nomask, rsv1, len=N for a
#       declared length with no such payload, fill=N for a payload of N
#       spaces); read:S prints the frames
#       that come in S seconds ("text N: ...", "close CODE", "eof"),
#       until:S:TEXT likewise until a text frame holding TEXT has come;
#       pings:MB sends MB MiB of 125-byte pings, reading nothing (a send
#       blocked for 10 s stops it), and prints how much went out;
#       frags:T sends the text message T a byte per fragment, with a ping
#       after the first; frag1:N sends a text message as N fragments of
#       one byte ("x") and
#       no final one, until the peer closes or a send blocks for 10 s, and
#       prints how many went out; drip:S:N sends the start of a text
#       message, then a one-byte fragment every S seconds, at most N of
#       them, until the peer sends a close frame, closes or resets, and
#       prints "dripped N in E s" (E from the first fragment), then what
#       came back; sleep:S
#       waits S seconds, reading nothing; hold:S:FILE waits until FILE
#       exists, at most S seconds, reading nothing.
#   client.py sessions ADDR N FILE
#       Make N sessions, one after another on one keep-alive connection
#       (initialize, then notifications/initialized), and write their ids
#       to FILE, one a line; print how many were made.
#   client.py streams ADDR IDS M READY STOP [--timeout S]
#       Open the standalone stream (GET) of the first M sessions in the
#       file IDS and read them all; write "open=N" to READY once each has
#       its answer's head, read until STOP exists (at most S seconds), and
#       print "open=N closed=C min=X max=Y": how many list_changed
#       notifications the stream that had the fewest and the most got.
#   client.py unix PATH N READY STOP [--timeout S]
#       Hold N connections to a unix socket (the control socket) until
#       STOP exists; print how many the other side had closed by then.
#   client.py ctlflood PATH N MAX SECS READY STOP [--command C] [--timeout S]
#       Open N connections to the control socket and send on each, for
#       SECS seconds, up to MAX requests {"command": C} (default "tools"),
#       as fast as the socket takes them, reading nothing; then write to
#       READY how many went out ("requests=R blocked=B closed=C": blocked,
#       the connections that could not send all MAX), hold them until STOP
#       exists (at most S seconds) and close them.
#   client.py ctltrickle PATH PAD MAX
#       Send the control socket a request {"command": "status"} padded
#       with PAD spaces, its header at once and its body a byte a second,
#       at most MAX bytes; print "closed=C answered=A sent=N elapsed=E",
#       E counted from the connection.
import os
import re
import resource
import select
import socket
import struct
import sys
import time


def addr_of(s):
    host, port = s.rsplit(':', 1)
    return host.strip('[]'), int(port)


def unescape(text):
    return text.encode('latin-1', 'backslashreplace').decode(
        'unicode_escape').encode('latin-1')


def connect(addr, rcvbuf=None, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(timeout)
    s.connect(addr_of(addr))
    return s


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def status_of(data):
    m = re.match(rb'HTTP/1\.[01] (\d{3})', data)
    return m.group(1).decode() if m else '-'


def read_all(s, timeout):
    """Read until EOF or `timeout` seconds without data."""
    out = b''
    s.settimeout(timeout)
    while len(out) < 64 * 1024 * 1024:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return out, False
        except ConnectionResetError:
            return out, True
        if not chunk:
            return out, True
        out += chunk
    return out, False


def cmd_send(argv):
    o, argv = opts(argv, ('--timeout',))
    timeout = float(o.get('--timeout', 5))
    try:
        s = connect(argv[0])
    except OSError as e:
        sys.exit('client.py: %s: %s' % (argv[0], e))
    got = b''
    try:
        for act in argv[1:]:
            kind, _, arg = act.partition(':')
            try:
                if kind == 's':
                    s.sendall(unescape(arg))
                elif kind == 'f':
                    with open(arg, 'rb') as f:
                        s.sendall(f.read())
                elif kind == 'b':
                    for byte in unescape(arg):
                        s.sendall(bytes([byte]))
                        time.sleep(0.001)
                elif kind == 'p':
                    time.sleep(int(arg) / 1000)
                elif kind == 'shut':
                    s.shutdown(socket.SHUT_WR)
                elif kind == 'r':
                    part, _ = read_all(s, float(arg))
                    got += part
                else:
                    raise SystemExit('unknown action ' + act)
            except (BrokenPipeError, ConnectionResetError):
                break
        part, _ = read_all(s, timeout)
        got += part
    finally:
        s.close()
    sys.stdout.buffer.write(got)


def cmd_trickle(argv):
    addr, prefix, most = argv[0], unescape(argv[1]), int(argv[2])
    s = connect(addr)
    start = time.monotonic()
    s.sendall(prefix)
    sent, got, closed = 0, b'', False
    deadline = start + most + 5
    next_byte = start + 1
    while time.monotonic() < deadline:
        wait = max(0.0, next_byte - time.monotonic())
        r, _, _ = select.select([s], [], [], wait)
        if r:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                chunk = b''
            if not chunk:
                closed = True
                break
            got += chunk
            if b'\r\n\r\n' in got:
                # Whatever follows, the answer has come: wait for the close.
                rest, closed = read_all(s, 5)
                got += rest
                break
            continue
        if sent < most:
            try:
                s.sendall(b'a')
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            sent += 1
        next_byte += 1
    elapsed = time.monotonic() - start
    s.close()
    print('status=%s elapsed=%.1f sent=%d closed=%d' %
          (status_of(got), elapsed, sent, closed))


def cmd_silent(argv):
    addr, most = argv[0], float(argv[1])
    s = connect(addr)
    start = time.monotonic()
    got, closed = read_all(s, most)
    elapsed = time.monotonic() - start
    s.close()
    print('status=%s elapsed=%.1f closed=%d' % (status_of(got), elapsed,
                                                 closed))


def opts(argv, names):
    out = {}
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] in names:
            out[argv[i]] = argv[i + 1]
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    return out, rest


def wait_stop(stop, timeout):
    end = time.monotonic() + timeout
    while not os.path.exists(stop) and time.monotonic() < end:
        time.sleep(0.05)


def write_file(path, text):
    with open(path + '.tmp', 'w') as f:
        f.write(text + '\n')
    os.rename(path + '.tmp', path)


def classify(s):
    """What the peer did: an HTTP status it sent, else 'closed' if it
    closed (or reset) the connection, else 'held'.  What an earlier look
    left unread (the rest of a body) is not a status."""
    data, eof, n = b'', False, 0
    try:
        s.setblocking(False)
        while n < 64 * 1024 * 1024:
            chunk = s.recv(65536)
            if not chunk:
                eof = True
                break
            if len(data) < 65536:
                data += chunk
            n += len(chunk)
    except (BlockingIOError, InterruptedError):
        pass
    except OSError:
        eof = True
    if data.startswith(b'HTTP/'):
        return status_of(data)
    return 'closed' if eof else 'held'


def tally(socks):
    counts = {}
    for s in socks:
        k = classify(s)
        counts[k] = counts.get(k, 0) + 1
    return ' '.join('%s=%d' % kv for kv in sorted(counts.items()))


def cmd_hold(argv):
    o, argv = opts(argv, ('--request', '--timeout'))
    addr, want, ready, stop = argv[0], int(argv[1]), argv[2], argv[3]
    timeout = float(o.get('--timeout', 60))
    request = unescape(o['--request']) if '--request' in o else None
    limit = raise_nofile(want + 64)
    n = min(want, limit - 32)
    socks, refused, answers = [], 0, {}
    for _ in range(n):
        try:
            s = connect(addr, timeout=5)
        except OSError:
            refused += 1
            continue
        if request is not None:
            try:
                s.sendall(request)
                head = b''
                while b'\r\n\r\n' not in head and len(head) < 65536:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    head += chunk
                st = status_of(head)
            except socket.timeout:
                st = 'none'
            except OSError:
                st = 'reset'
            answers[st] = answers.get(st, 0) + 1
        socks.append(s)
    time.sleep(0.5)
    first = tally(socks)
    write_file(ready, 'opened=%d refused=%d %s' % (len(socks), refused,
                                                   first))
    wait_stop(stop, timeout)
    last = tally(socks)
    for s in socks:
        s.close()
    print('wanted=%d limit=%d opened=%d refused=%d answers: %s; '
          'when ready: %s; at the end: %s' % (
              want, limit, len(socks), refused,
              ' '.join('%s=%d' % kv for kv in sorted(answers.items())),
              first, last))


def cmd_stall(argv):
    o, argv = opts(argv, ('--timeout',))
    addr, ready, stop = argv[0], argv[1], argv[2]
    timeout = float(o.get('--timeout', 120))
    socks = []
    for text in argv[3:]:
        s = connect(addr, rcvbuf=4096)
        s.sendall(unescape(text))
        s.recv(64)      # the status line has come: now stop reading
        socks.append(s)
    write_file(ready, 'stalled=%d' % len(socks))
    wait_stop(stop, timeout)
    last = tally(socks)
    for s in socks:
        s.close()
    print('stalled=%d at the end: %s' % (len(socks), last))


class WS:
    def __init__(self, addr):
        self.s = connect(addr, rcvbuf=4096)
        self.buf = b''
        self.open = False

    def upgrade(self, extra):
        import base64
        headers = {
            'Host': '127.0.0.1', 'Upgrade': 'websocket',
            'Connection': 'Upgrade', 'Sec-WebSocket-Version': '13',
            'Sec-WebSocket-Key': base64.b64encode(os.urandom(16)).decode(),
            'Sec-WebSocket-Protocol': 'mcp'}
        for h in extra:
            name, _, value = h.partition(':')
            value = value.strip()
            for k in list(headers):
                if k.lower() == name.lower():
                    del headers[k]
            if value:
                headers[name] = value
        self.s.sendall(('GET /ws HTTP/1.1\r\n' + ''.join(
            '%s: %s\r\n' % kv for kv in headers.items()) + '\r\n').encode())
        self.s.settimeout(5)
        while b'\r\n\r\n' not in self.buf and len(self.buf) < 65536:
            chunk = self.s.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b'\r\n\r\n')
        self.open = status_of(head) == '101'
        print('status %s' % status_of(head))

    @staticmethod
    def frame(op, payload, fin=True, mask=True, rsv1=False, length=None):
        n = len(payload) if length is None else length
        b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | op
        if n < 126:
            hdr = bytes([b0, (0x80 if mask else 0) | n])
        elif n < 65536:
            hdr = bytes([b0, (0x80 if mask else 0) | 126]) + n.to_bytes(2, 'big')
        else:
            hdr = bytes([b0, (0x80 if mask else 0) | 127]) + n.to_bytes(8, 'big')
        if not mask:
            return hdr + payload
        key = os.urandom(4)
        return hdr + key + bytes(c ^ key[i % 4] for i, c in enumerate(payload))

    def closed(self):
        """Does what was read and not yet shown hold a close frame?"""
        off = 0
        while len(self.buf) >= off + 2:
            n, hdr = self.buf[off + 1] & 0x7f, 2
            if n == 126:
                n, hdr = int.from_bytes(self.buf[off + 2:off + 4], 'big'), 4
            elif n == 127:
                n, hdr = int.from_bytes(self.buf[off + 2:off + 10], 'big'), 10
            if len(self.buf) < off + hdr + n:
                return False
            if self.buf[off] & 0x0f == 8:
                return True
            off += hdr + n
        return False

    def read(self, secs, until=None):
        end = time.monotonic() + secs
        while True:
            while self.open and len(self.buf) >= 2:
                n = self.buf[1] & 0x7f
                off = 2
                if n == 126:
                    if len(self.buf) < 4:
                        break
                    n, off = int.from_bytes(self.buf[2:4], 'big'), 4
                elif n == 127:
                    if len(self.buf) < 10:
                        break
                    n, off = int.from_bytes(self.buf[2:10], 'big'), 10
                if len(self.buf) < off + n:
                    break
                op, data = self.buf[0] & 0x0f, self.buf[off:off + n]
                self.buf = self.buf[off + n:]
                if op == 8:
                    code = int.from_bytes(data[:2], 'big') if n >= 2 else 0
                    print('close %d %s' % (code, data[2:].decode('utf-8', 'replace')))
                    return
                elif op == 1:
                    text = data.decode('utf-8', 'replace')
                    print('text %d: %s' % (n, text[:300]))
                    if until is not None and until in text:
                        return
                else:
                    print('op %d len %d' % (op, n))
            left = end - time.monotonic()
            if left <= 0:
                return
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                return
            except OSError:
                chunk = b''
            if not chunk:
                print('eof')
                return
            self.buf += chunk


def cmd_ws(argv):
    ws = WS(argv[0])
    acts = argv[1:]
    i = 0
    try:
        while i < len(acts):
            act = acts[i]
            i += 1
            kind, _, arg = act.partition(':')
            if kind == 'up':
                extra = []
                while i < len(acts) and ':' in acts[i] and \
                        acts[i].split(':')[0] not in (
                            'text', 'frame', 'read', 'pings', 'up', 'sleep',
                            'hold', 'until', 'frags', 'frag1', 'drip'):
                    extra.append(acts[i])
                    i += 1
                ws.upgrade(extra)
            elif kind == 'text':
                ws.s.sendall(WS.frame(1, arg.encode()))
            elif kind == 'frame':
                op, flags, payload = arg.split(':', 2)
                flags = flags.split(',')
                length = None
                payload = unescape(payload)
                for f in flags:
                    if f.startswith('len='):
                        length = int(f[4:])
                    elif f.startswith('fill='):
                        payload = b' ' * int(f[5:])
                ws.s.sendall(WS.frame(int(op), payload,
                                      fin='nofin' not in flags,
                                      mask='nomask' not in flags,
                                      rsv1='rsv1' in flags, length=length))
            elif kind == 'read':
                ws.read(float(arg))
            elif kind == 'until':
                secs, _, text = arg.partition(':')
                ws.read(float(secs), text)
            elif kind == 'sleep':
                time.sleep(float(arg))
            elif kind == 'hold':
                secs, _, path = arg.partition(':')
                wait_stop(path, float(secs))
            elif kind == 'frags':
                data = arg.encode()
                out = [WS.frame(1, data[:1], fin=len(data) == 1),
                       WS.frame(9, b'between')]
                for k in range(1, len(data)):
                    out.append(WS.frame(0, data[k:k + 1],
                                        fin=k == len(data) - 1))
                ws.s.sendall(b''.join(out))
            elif kind == 'frag1':
                want = int(arg)
                block = WS.frame(0, b'x', fin=False) * 65536
                sent = 0
                ws.s.settimeout(10)
                try:
                    ws.s.sendall(WS.frame(1, b'x', fin=False))
                    sent = 1
                    while sent < want:
                        n = min(65536, want - sent)
                        ws.s.sendall(block if n == 65536 else
                                     block[:n * len(block) // 65536])
                        sent += n
                except (socket.timeout, OSError) as e:
                    print('fragments stopped: %s' % type(e).__name__)
                print('fragments sent %d' % sent)
            elif kind == 'drip':
                secs, _, most = arg.partition(':')
                frag = WS.frame(0, b'x', fin=False)
                start = time.monotonic()
                n = 0
                try:
                    ws.s.sendall(WS.frame(1, b'{', fin=False))
                    while n < int(most) and not ws.closed():
                        r, _, _ = select.select([ws.s], [], [], float(secs))
                        if r:
                            chunk = ws.s.recv(65536)
                            if not chunk:
                                break
                            ws.buf += chunk
                            continue
                        ws.s.sendall(frag)
                        n += 1
                except OSError as e:
                    print('drip stopped: %s' % type(e).__name__)
                print('dripped %d in %.1f s' % (n, time.monotonic() - start))
                ws.read(5)
            elif kind == 'pings':
                ping = WS.frame(9, b'p' * 125)
                block = ping * 8192
                sent, want = 0, int(arg) * 1024 * 1024
                ws.s.settimeout(10)
                try:
                    while sent < want:
                        ws.s.sendall(block)
                        sent += len(block)
                except (socket.timeout, OSError) as e:
                    print('pings stopped: %s' % type(e).__name__)
                print('pings sent %d MiB' % (sent >> 20))
            else:
                raise SystemExit('unknown action ' + act)
    except (BrokenPipeError, ConnectionResetError):
        print('reset')
    finally:
        ws.s.close()


def unix_connect(path):
    """A non-blocking connection to a unix socket, or None.  A full listen
    queue refuses at once (EAGAIN): retry for 5 s."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    end = time.monotonic() + 5
    while True:
        try:
            s.connect(path)
            break
        except (BlockingIOError, InterruptedError):
            if time.monotonic() > end:
                break
            time.sleep(0.01)
        except OSError:
            break
    try:
        s.getpeername()
    except OSError:
        s.close()
        return None
    return s


def cmd_unix(argv):
    o, argv = opts(argv, ('--timeout',))
    path, n, ready, stop = argv[0], int(argv[1]), argv[2], argv[3]
    timeout = float(o.get('--timeout', 60))
    socks = []
    for _ in range(n):
        s = unix_connect(path)
        if s is None:
            break
        socks.append(s)
    write_file(ready, 'opened=%d' % len(socks))
    wait_stop(stop, timeout)
    # Which did the other side close meanwhile (end of file at once)?
    held = closed = 0
    for s in socks:
        try:
            closed += s.recv(1) == b''
        except BlockingIOError:
            held += 1
        except OSError:
            closed += 1
        s.close()
    print('unix opened=%d at the end: held=%d closed=%d' % (len(socks), held,
                                                          closed))


def read_response(s, buf):
    """One HTTP response with a Content-Length or no body: (head, body,
    rest of buf), or None if the connection ended first."""
    while b'\r\n\r\n' not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None
        buf += chunk
    head, _, buf = buf.partition(b'\r\n\r\n')
    m = re.search(rb'(?im)^content-length:\s*(\d+)', head)
    n = int(m.group(1)) if m else 0
    while len(buf) < n:
        chunk = s.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return head, buf[:n], buf[n:]


def cmd_sessions(argv):
    addr, n, path = argv[0], int(argv[1]), argv[2]
    init = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
            b'{"protocolVersion":"2025-11-25","capabilities":{},'
            b'"clientInfo":{"name":"attack","version":"1"}}}')
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    s = connect(addr, timeout=60)
    buf = b''
    ids = []
    for _ in range(n):
        s.sendall(b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                  b'Content-Type: application/json\r\n'
                  b'Accept: application/json, text/event-stream\r\n'
                  b'Content-Length: %d\r\n\r\n' % len(init) + init)
        r = read_response(s, buf)
        if r is None:
            break
        head, _, buf = r
        m = re.search(rb'(?im)^mcp-session-id:\s*(\S+)', head)
        if status_of(head) != '200' or m is None:
            break
        sid = m.group(1)
        s.sendall(b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                  b'Content-Type: application/json\r\n'
                  b'Accept: application/json, text/event-stream\r\n'
                  b'Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25'
                  b'\r\nContent-Length: %d\r\n\r\n' % (sid, len(note)) +
                  note)
        r = read_response(s, buf)
        if r is None or status_of(r[0]) != '202':
            break
        buf = r[2]
        ids.append(sid.decode())
    s.close()
    write_file(path, ''.join(i + '\n' for i in ids))
    print('sessions=%d' % len(ids))


def cmd_streams(argv):
    o, argv = opts(argv, ('--timeout',))
    addr, ids, m, ready, stop = (argv[0], argv[1], int(argv[2]), argv[3],
                                 argv[4])
    timeout = float(o.get('--timeout', 120))
    raise_nofile(m + 64)
    with open(ids) as f:
        sids = [line.strip() for line in f if line.strip()][:m]
    socks = {}
    for sid in sids:
        s = connect(addr)
        s.sendall(('GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                   'Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n'
                   'MCP-Protocol-Version: 2025-11-25\r\n\r\n' % sid).encode())
        socks[s] = [b'', 0, False]     # data, list_changed seen, head seen
    pat = b'notifications/tools/list_changed'
    closed = 0
    said = False
    end = time.monotonic() + timeout
    live = list(socks)
    while live and not os.path.exists(stop) and time.monotonic() < end:
        rd, _, _ = select.select(live, [], [], 0.2)
        for s in rd:
            st = socks[s]
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b''
            if not chunk:
                closed += 1
                live.remove(s)
                continue
            st[0] += chunk
            if not st[2] and b'\r\n\r\n' in st[0]:
                st[2] = status_of(st[0]) == '200'
            # Count whole occurrences; keep a tail that may hold a part.
            st[1] += st[0].count(pat)
            st[0] = st[0][-(len(pat) - 1):]
        if not said and all(v[2] for v in socks.values()):
            write_file(ready, 'open=%d' % len(socks))
            said = True
    counts = [v[1] for v in socks.values()]
    for s in socks:
        s.close()
    print('open=%d closed=%d min=%d max=%d' % (
        sum(1 for v in socks.values() if v[2]), closed,
        min(counts) if counts else 0, max(counts) if counts else 0))


def ctl_frame(body):
    """A control request frame (common/frame.h): length, type
    MSG_CTL_REQUEST (64), flags, session, tag; then the JSON body."""
    return struct.pack('!IHHII', len(body), 64, 0, 0, 0) + body


def cmd_ctlflood(argv):
    o, argv = opts(argv, ('--command', '--timeout'))
    path, n, most, secs = argv[0], int(argv[1]), int(argv[2]), float(argv[3])
    ready, stop = argv[4], argv[5]
    timeout = float(o.get('--timeout', 60))
    req = ctl_frame(('{"command":"%s"}' % o.get('--command', 'tools'))
                    .encode())
    batch = 64
    conns = []          # [socket, requests queued, bytes left of them]
    for _ in range(n):
        s = unix_connect(path)
        if s is None:
            break
        conns.append([s, 0, b''])
    closed = set()
    end = time.monotonic() + secs
    while time.monotonic() < end:
        want = [c[0] for c in conns
                if c[0] not in closed and (c[2] or c[1] < most)]
        if not want:
            break
        _, w, _ = select.select([], want, [], 0.1)
        for c in conns:
            if c[0] not in w:
                continue
            if not c[2]:
                k = min(batch, most - c[1])
                c[1] += k
                c[2] = req * k
            try:
                sent = c[0].send(c[2])
                c[2] = c[2][sent:]
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                closed.add(c[0])
    # Requests that left, whole: those queued less what did not go out.
    total = sum(c[1] - (len(c[2]) + len(req) - 1) // len(req)
                for c in conns)
    blocked = sum(1 for c in conns if c[2] or c[1] < most)
    write_file(ready, 'connections=%d requests=%d blocked=%d closed=%d' % (
        len(conns), total, blocked, len(closed)))
    wait_stop(stop, timeout)
    for c in conns:
        c[0].close()
    print('ctlflood connections=%d requests=%d blocked=%d' % (
        len(conns), total, blocked))


def cmd_ctltrickle(argv):
    path, pad, most = argv[0], int(argv[1]), int(argv[2])
    body = ('{"command":"status"%s}' % (' ' * pad)).encode()
    frame = ctl_frame(body)
    start = time.monotonic()
    s = unix_connect(path)
    if s is None:
        sys.exit('client.py: %s: cannot connect' % path)
    s.setblocking(True)
    s.sendall(frame[:16])
    sent, closed, answered = 0, False, False
    for byte in frame[16:16 + most]:
        r, _, _ = select.select([s], [], [], 1)
        if r:
            try:
                got = s.recv(65536)
            except OSError:
                got = b''
            if got:
                answered = True
            else:
                closed = True
            break
        try:
            s.sendall(bytes([byte]))
        except OSError:
            closed = True
            break
        sent += 1
    if not closed and not answered:
        s.settimeout(5)
        try:
            got = s.recv(65536)
            answered = bool(got)
            closed = not got
        except socket.timeout:
            pass
        except OSError:
            closed = True
    elapsed = time.monotonic() - start
    s.close()
    print('closed=%d answered=%d sent=%d elapsed=%.1f' % (
        closed, answered, sent, elapsed))


def main():
    cmds = {'send': cmd_send, 'trickle': cmd_trickle, 'silent': cmd_silent,
            'hold': cmd_hold, 'stall': cmd_stall, 'unix': cmd_unix,
            'ws': cmd_ws, 'ctlflood': cmd_ctlflood,
            'ctltrickle': cmd_ctltrickle, 'sessions': cmd_sessions,
            'streams': cmd_streams}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        sys.exit('usage: client.py send|trickle|silent|hold|stall|ws|unix|'
                 'ctlflood|ctltrickle|sessions|streams ...')
    cmds[sys.argv[1]](sys.argv[2:])


if __name__ == '__main__':
    main()
