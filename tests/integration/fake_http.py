#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# A hostile HTTP server on a loopback port for the agent's and report --from's tests:
#   fake_http.py MODE PORTFILE [SIZE]
#   silent   accepts every connection, reads the request and never answers;
#   big500   answers every request with status 500 and a body of SIZE bytes (default 200 MB);
#   big200   the same with status 200.
# The port (chosen by the kernel) is written to PORTFILE once it listens.
import os
import socket
import sys
import threading

mode, portfile = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 200 * 1000 * 1000
held = []


def serve(c):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            got = c.recv(65536)
            if not got:
                return
            data += got
        if mode == "silent":
            held.append(c)  # never answered, never closed
            return
        status = "500 Internal Server Error" if mode == "big500" else "200 OK"
        c.sendall(("HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                   % (status, size)).encode())
        chunk = b"Code: 1000, e.displayText() = DB::Exception: a very long answer " + b"x" * 65472
        left = size
        while left > 0:
            n = min(left, len(chunk))
            c.sendall(chunk[:n])
            left -= n
    except OSError:
        pass
    finally:
        if mode != "silent":
            c.close()


s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
