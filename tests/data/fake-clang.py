#!/usr/bin/env python3
"""A stand-in for clang-22 in the evaluator's fault tests.

Called like clang -cc1 (… -fake-mode=MODE -fake-object=OBJ … -o OUT). Without
the interactive channel flag it copies OBJ to OUT (a plain compile). With
`-inliner-interactive-channel-base=B` it behaves according to MODE:
  ok        speak the protocol properly (3 decisions), then write OUT
  crash     die by SIGSEGV before opening the channel
  crash-mid die by SIGABRT after the first decision
  hang      never open the channel, sleep for a long time
  hang-mid  stop answering after the header (sleep)
  garbage   write a line that is not the protocol
  truncate  write half an observation and exit 1
  early     exit 0 after the header without writing an object
  nochannel never open the channel; write OUT and exit 0
  fail      exit 1 with a message on stderr
"""
import os
import shutil
import signal
import struct
import sys
import time

args = sys.argv[1:]
mode = 'ok'
obj = out = base = header_path = None
for i, a in enumerate(args):
    if a.startswith('-fake-mode='):
        mode = a.split('=', 1)[1]
    elif a.startswith('-fake-object='):
        obj = a.split('=', 1)[1]
    elif a.startswith('-fake-header='):
        header_path = a.split('=', 1)[1]
    elif a.startswith('-inliner-interactive-channel-base='):
        base = a.split('=', 1)[1]
    elif a == '-o':
        out = args[i + 1]

if base is None:
    shutil.copyfile(obj, out)
    sys.exit(0)

if mode == 'crash':
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == 'hang':
    time.sleep(600)
if mode == 'fail':
    print('error: fake failure', file=sys.stderr)
    sys.exit(1)
if mode == 'nochannel':
    shutil.copyfile(obj, out)
    sys.exit(0)

advice_in = open(base + '.in', 'rb')
obs_out = open(base + '.out', 'wb')
header = open(header_path, 'rb').read().strip() + b'\n'
obs_out.write(header)
obs_out.write(b'{"context":"fake"}\n')
obs_out.flush()
if mode == 'garbage':
    obs_out.write(b'this is not the protocol\n')
    obs_out.flush()
    time.sleep(600)
if mode == 'hang-mid':
    time.sleep(600)
if mode == 'early':
    sys.exit(0)

nfeatures = 39
for n in range(3):
    values = [n * 10 + k for k in range(nfeatures - 1)] + [n % 2]  # last: inlining_default
    payload = struct.pack('<%dq' % nfeatures, *values)
    obs_out.write(b'{"observation":%d}\n' % n)
    if mode == 'truncate':
        obs_out.write(payload[:100])
        obs_out.flush()
        sys.exit(1)
    obs_out.write(payload + b'\n')
    obs_out.flush()
    advice = advice_in.read(8)
    if len(advice) != 8:
        sys.exit(3)
    if mode == 'crash-mid':
        os.kill(os.getpid(), signal.SIGABRT)
obs_out.close()
shutil.copyfile(obj, out)
sys.exit(0)
