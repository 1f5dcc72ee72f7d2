#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Upstreams that misbehave, for t/attack/upstreams.sh and secrets.sh:
# stdio MCP servers (one an HTTP server), standard library only, each bad
# in one way.
#
#   upstream.py garbage   writes garbage lines (not JSON, not JSON-RPC,
#                         answers to nothing, control bytes, invalid UTF-8)
#                         before its initialize answer and, on the tool
#                         "spew" {count}, count of them before the answer
#   upstream.py storm     on the tool "storm" {count}, count notifications
#                         (logs, progress for unknown tokens, resource
#                         updates, unknown methods, list_changed) first
#   upstream.py forker MARK
#                         starts four children running "sleep MARK": one
#                         in its process group that keeps its standard
#                         input, output and error, one in a session of its
#                         own, one double-forked into a session of its own,
#                         one that ignores SIGTERM; the tool "quit" exits
#                         without answering
#   upstream.py mute      reads its input and never answers, initialize
#                         included
#   upstream.py endless   on the tool "endless", starts its answer's line
#                         and never ends it (256 KiB every 0.1 s)
#   upstream.py sampler   on the tool "sample" {params}, sends
#                         sampling/createMessage with params, a string of
#                         JSON text sent as it is (duplicate keys, numbers
#                         out of any range), and answers with the answer it
#                         got, as JSON text
#   upstream.py files LOG a file server: lists file:///pub/a.txt,
#                         file:///pub/private/key.txt,
#                         file:///secret/key.txt and
#                         file:///pub/../secret/listed.txt, and the template
#                         file:///{+path}; appends "METHOD URI" to LOG for
#                         every resources/read, subscribe, unsubscribe and
#                         completion/complete, and answers them
#   upstream.py nosy      looks for secrets: the tool "environ" answers
#                         with its environment (JSON), "peek" {pids} with
#                         what it could open of each process's
#                         /proc/PID/environ and /proc/PID/mem ("ok" or
#                         the error's name)
#   upstream.py lister    on the tool "change", says its tools changed;
#                         answers its first tools/list, never its second,
#                         and adds the tool "added" from its third on
#   upstream.py http PORTFILE
#                         a Streamable HTTP server on 127.0.0.1 (JSON
#                         answers, no stream), its port written to
#                         PORTFILE; the tool "whoami" answers with the
#                         Basic credentials, the query and the X-Api-Key
#                         header it was sent
# Every server also has the tool "echo" {text}.
import base64
import errno
import json
import os
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else 'garbage'
out = sys.stdout.buffer


def send(obj):
    out.write(json.dumps(obj, separators=(',', ':')).encode() + b'\n')
    out.flush()


def result(mid, text):
    send({'jsonrpc': '2.0', 'id': mid,
          'result': {'content': [{'type': 'text', 'text': text}]}})


GARBAGE = [
    b'this is not JSON',
    b'{"jsonrpc":"2.0"',
    b'[1,2,3]',
    b'"a string"',
    b'{"jsonrpc":"2.0","id":987654321,"result":{}}',
    b'{"jsonrpc":"2.0","id":"nobody","error":{"code":1,"message":"x"}}',
    b'{"jsonrpc":"1.0","method":"x"}',
    b'{"jsonrpc":"2.0","method":7}',
    b'\x00\x01\x02\x1b[31m',
    b'\xff\xfe\xc0\x80 invalid UTF-8',
    b'{"jsonrpc":"2.0","id":1,"id":2,"result":{}}',
    b'',
    b'   ',
]


def garbage(n):
    for i in range(n):
        out.write(GARBAGE[i % len(GARBAGE)] + b'\n')
    out.flush()


def storm(n):
    for i in range(n):
        k = i % 6
        if k == 0:
            send({'jsonrpc': '2.0', 'method': 'notifications/message',
                  'params': {'level': 'info', 'data': 'storm %d' % i}})
        elif k == 1:
            send({'jsonrpc': '2.0', 'method': 'notifications/progress',
                  'params': {'progressToken': 'nobody-%d' % i,
                             'progress': i}})
        elif k == 2:
            send({'jsonrpc': '2.0',
                  'method': 'notifications/resources/updated',
                  'params': {'uri': 'storm://%d' % i}})
        elif k == 3:
            send({'jsonrpc': '2.0', 'method': 'notifications/storm/%d' % i,
                  'params': {}})
        elif k == 4:
            send({'jsonrpc': '2.0', 'method': 'notifications/cancelled',
                  'params': {'requestId': 'nobody-%d' % i}})
        elif i % 500 == 5:
            send({'jsonrpc': '2.0',
                  'method': 'notifications/tools/list_changed'})
        else:
            send({'jsonrpc': '2.0', 'method': 'notifications/message',
                  'params': {'level': 'debug', 'data': 'storm %d' % i}})


def forker(mark):
    def child(setsid=False, double=False, ignore_term=False, keep=False):
        pid = os.fork()
        if pid != 0:
            if double:
                os.waitpid(pid, 0)
            return
        try:
            if setsid:
                os.setsid()
            if double and os.fork() != 0:
                os._exit(0)
            if ignore_term:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if not keep:
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
            os.execvp('sleep', ['sleep', mark])
        finally:
            os._exit(127)
    child(keep=True)
    child(setsid=True)
    child(setsid=True, double=True)
    child(ignore_term=True)


def endless(mid):
    out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode() +
              b',"result":{"content":[{"type":"text","text":"')
    chunk = b'x' * (256 * 1024)
    while True:
        out.write(chunk)
        out.flush()
        time.sleep(0.1)


def peek(pids):
    seen = {}
    for pid in pids:
        seen[str(pid)] = {}
        for what in ('environ', 'mem'):
            try:
                with open('/proc/%d/%s' % (int(pid), what), 'rb') as f:
                    if what == 'environ':
                        f.read()
                seen[str(pid)][what] = 'ok'
            except OSError as e:
                seen[str(pid)][what] = errno.errorcode.get(e.errno, str(e))
    return seen


def http_serve(portfile):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlsplit

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, obj=None):
            body = b'' if obj is None else json.dumps(obj).encode()
            self.send_response(status)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.reply(405)

        def do_DELETE(self):
            self.reply(200)

        def do_POST(self):
            n = int(self.headers.get('Content-Length') or 0)
            try:
                msg = json.loads(self.rfile.read(n))
            except ValueError:
                self.reply(400)
                return
            method, mid = msg.get('method'), msg.get('id')
            params = msg.get('params') or {}
            if mid is None:
                self.reply(202)
            elif method == 'initialize':
                self.reply(200, {'jsonrpc': '2.0', 'id': mid, 'result': {
                    'protocolVersion': params.get('protocolVersion'),
                    'capabilities': {'tools': {}},
                    'serverInfo': {'name': 'attack-http', 'version': '1'}}})
            elif method == 'tools/list':
                self.reply(200, {'jsonrpc': '2.0', 'id': mid, 'result': {
                    'tools': [tool('echo'), tool('whoami')]}})
            elif method == 'tools/call' and params.get('name') == 'whoami':
                auth = self.headers.get('Authorization') or ''
                if auth.startswith('Basic '):
                    auth = base64.b64decode(auth[6:]).decode()
                self.reply(200, {'jsonrpc': '2.0', 'id': mid, 'result': {
                    'content': [{'type': 'text',
                                 'text': 'basic=%s query=%s key=%s' % (
                                     auth, urlsplit(self.path).query,
                                     self.headers.get('X-Api-Key'))}]}})
            elif method == 'tools/call':
                args = params.get('arguments') or {}
                self.reply(200, {'jsonrpc': '2.0', 'id': mid, 'result': {
                    'content': [{'type': 'text',
                                 'text': str(args.get('text', ''))}]}})
            elif method == 'ping':
                self.reply(200, {'jsonrpc': '2.0', 'id': mid, 'result': {}})
            else:
                self.reply(200, {'jsonrpc': '2.0', 'id': mid, 'error': {
                    'code': -32601, 'message': 'Method not found'}})

    srv = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    with open(portfile + '.new', 'w') as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + '.new', portfile)
    srv.serve_forever()


TOOLS = {
    'garbage': ['spew'],
    'storm': ['storm'],
    'forker': ['quit'],
    'mute': [],
    'endless': ['endless'],
    'sampler': ['sample'],
    'files': [],
    'nosy': ['environ', 'peek'],
    'lister': ['change'],
}
LISTS = [0]
FILES = ['file:///pub/a.txt', 'file:///pub/private/key.txt',
         'file:///secret/key.txt', 'file:///pub/../secret/listed.txt']
SAMPLING = {}   # our request id -> the tool call's id
SAMPLED = [0]   # requests sent


def files(method, mid, params):
    if method == 'resources/list':
        send({'jsonrpc': '2.0', 'id': mid, 'result': {'resources': [
            {'uri': u, 'name': u.rsplit('/', 1)[1]} for u in FILES]}})
    elif method == 'resources/templates/list':
        send({'jsonrpc': '2.0', 'id': mid, 'result': {'resourceTemplates': [
            {'uriTemplate': 'file:///{+path}', 'name': 'file'}]}})
    elif method in ('resources/read', 'resources/subscribe',
                    'resources/unsubscribe', 'completion/complete'):
        uri = params.get('uri')
        if method == 'completion/complete':
            uri = (params.get('ref') or {}).get('uri')
        with open(sys.argv[2], 'a') as f:
            f.write('%s %s\n' % (method, uri))
        if method == 'resources/read':
            send({'jsonrpc': '2.0', 'id': mid, 'result': {'contents': [
                {'uri': uri, 'text': 'read ' + str(uri)}]}})
        elif method == 'completion/complete':
            send({'jsonrpc': '2.0', 'id': mid, 'result': {
                'completion': {'values': []}}})
        else:
            send({'jsonrpc': '2.0', 'id': mid, 'result': {}})
    else:
        return False
    return True


def tool(name):
    return {'name': name, 'description': name,
            'inputSchema': {'type': 'object'}}


def main():
    if MODE == 'http':
        http_serve(sys.argv[2])
    if MODE == 'forker':
        forker(sys.argv[2])
    if MODE == 'garbage':
        garbage(1000)
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if MODE == 'mute' or not isinstance(msg, dict):
            continue
        method, mid = msg.get('method'), msg.get('id')
        if method is None and mid in SAMPLING:
            result(SAMPLING.pop(mid), json.dumps(msg))
            continue
        if mid is None or method is None:
            continue
        params = msg.get('params') or {}
        if MODE == 'files' and files(method, mid, params):
            continue
        if method == 'initialize':
            caps = {'tools': {'listChanged': True}}
            if MODE == 'files':
                caps['resources'] = {'subscribe': True}
                caps['completions'] = {}
            send({'jsonrpc': '2.0', 'id': mid, 'result': {
                'protocolVersion': params.get('protocolVersion',
                                              '2025-11-25'),
                'capabilities': caps,
                'serverInfo': {'name': 'attack-' + MODE, 'version': '1'}}})
        elif method == 'tools/list':
            LISTS[0] += 1
            names = ['echo'] + TOOLS[MODE]
            if MODE == 'lister' and LISTS[0] == 2:
                continue
            if MODE == 'lister' and LISTS[0] > 2:
                names.append('added')
            send({'jsonrpc': '2.0', 'id': mid, 'result': {
                'tools': [tool(n) for n in names]}})
        elif method == 'tools/call':
            name = params.get('name')
            args = params.get('arguments') or {}
            if name == 'echo':
                result(mid, str(args.get('text', '')))
            elif name == 'spew':
                garbage(int(args.get('count', 1000)))
                result(mid, 'spewed')
            elif name == 'storm':
                storm(int(args.get('count', 1000)))
                result(mid, 'stormed')
            elif name == 'quit':
                os._exit(0)
            elif name == 'change':
                send({'jsonrpc': '2.0',
                      'method': 'notifications/tools/list_changed'})
                result(mid, 'changed')
            elif name == 'endless':
                endless(mid)
            elif name == 'sample':
                SAMPLED[0] += 1
                sid = 'sample-%d' % SAMPLED[0]
                SAMPLING[sid] = mid
                out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(sid).encode()
                          + b',"method":"sampling/createMessage","params":' +
                          str(args.get('params', '{}')).encode() + b'}\n')
                out.flush()
            elif name == 'environ':
                result(mid, json.dumps(dict(os.environ)))
            elif name == 'peek':
                result(mid, json.dumps(peek(args.get('pids') or [])))
            else:
                send({'jsonrpc': '2.0', 'id': mid, 'error': {
                    'code': -32602, 'message': 'unknown tool'}})
        elif method == 'ping':
            send({'jsonrpc': '2.0', 'id': mid, 'result': {}})
        else:
            send({'jsonrpc': '2.0', 'id': mid, 'error': {
                'code': -32601, 'message': 'Method not found'}})


if __name__ == '__main__':
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
