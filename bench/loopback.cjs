// SPDX-License-Identifier: ISC
// Preloaded into the Node.js peers (NODE_OPTIONS=--require) so that a
// server that listens on a port without naming an address (supergateway
// has no option for it) listens on 127.0.0.1 only, never on every
// interface.  A listen() call that names an address is left alone.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const port = Number(args[0]);
    const rest = args.slice(1);
    if (typeof rest[0] !== 'string')
      return listen.call(this, port, '127.0.0.1', ...rest);
  } else if (args[0] && typeof args[0] === 'object' && !Array.isArray(args[0]) &&
             args[0].port !== undefined && args[0].host === undefined && args[0].path === undefined) {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
  }
  return listen.apply(this, args);
};
