"""A busy cell polls for widget events; a Stop click is sent the way ipywidgets' frontend sends it. Does the click
reach the button while the cell runs — through jupyter_ui_poll, and through the dashboard's own reader
(reaver_nb.ui.dashboard._handle_widget_messages)? `python ui_poll.py [jupyter_ui_poll|reaver_nb]` runs one way only.
A kernel of this interpreter runs each (ipykernel, ipywidgets, jupyter_ui_poll and jupyter_client needed)."""
import queue, sys, time
from jupyter_client.manager import start_new_kernel

CELL = """
import ipykernel, ipywidgets as w, time, jupyter_ui_poll
from importlib.metadata import version
from IPython.display import display
b, clicked = w.Button(description='Stop'), []
b.on_click(lambda _: clicked.append(1))
display(b)
t = time.monotonic()
POLL
print('RESULT', 'ipykernel', ipykernel.__version__, 'jupyter_ui_poll', version('jupyter-ui-poll'),
      'has do_one_iteration:', hasattr(get_ipython().kernel, 'do_one_iteration'),
      'click seen:', bool(clicked), f'after {time.monotonic() - t:.1f} s')
"""
WAYS = {'jupyter_ui_poll.ui_events':
            "with jupyter_ui_poll.ui_events() as poll:\n"
            "    while not clicked and time.monotonic() - t < 15: poll(20); time.sleep(0.05)",
        'reaver_nb dashboard._handle_widget_messages':
            "from reaver_nb.ui.dashboard import _handle_widget_messages\n"
            "while not clicked and time.monotonic() - t < 15: _handle_widget_messages(get_ipython().kernel); time.sleep(0.05)"}

for name, poll in [(k, v) for k, v in WAYS.items() if not sys.argv[1:] or k.startswith(sys.argv[1])]:
    km, kc = start_new_kernel(kernel_name='python3')
    try:
        msg_id, button, sent, out = kc.execute(CELL.replace('POLL', poll)), None, False, []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try: msg = kc.get_iopub_msg(timeout=0.2)
            except queue.Empty: continue
            t, c = msg['msg_type'], msg['content']
            if t == 'comm_open' and c.get('data', {}).get('state', {}).get('_model_name') == 'ButtonModel':
                button = c['comm_id']
            if button and not sent:
                time.sleep(1)
                kc.shell_channel.send(kc.session.msg('comm_msg', {'comm_id': button, 'data': {
                    'method': 'custom', 'content': {'event': 'click'}}})); sent = True
            if t == 'stream': out.append(c['text'])
            if t == 'error': out.append('\n'.join(c['traceback'])[-500:])
            if t == 'status' and c['execution_state'] == 'idle' and msg['parent_header'].get('msg_id') == msg_id: break
        print(f"{name}: {''.join(out).strip()}")
    finally:
        kc.stop_channels(); km.shutdown_kernel(now=True)
