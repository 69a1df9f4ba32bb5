"""The dashboard's Stop button ends a run while its cell is still executing — the click sent as a frontend sends it
(a widget `comm_msg` on the shell channel) to a real kernel of this environment. Under Colab's pinned versions
(ipykernel 6, ipywidgets 7.7: `.ci/run` runs this file there too) the click goes through jupyter_ui_poll; under
ipykernel >= 7.1 through the dashboard's own reading of the shell socket. tests/test_browser.py clicks it in Chromium."""
import queue, time
import pytest

jupyter_client = pytest.importorskip('jupyter_client')
pytest.importorskip('ipywidgets')

TRAIN = """
import reaver_nb
out = reaver_nb.train('CartPole-v1', 'ppo', steps=5_000_000, n_envs=4, results_dir=RESULTS, run_id='stop_me',
                      gin_params=['PPO.minibatch_size = 32', 'RunSettings.log_seconds = 1'])
print('RESULT', out['stopped'], out['frames'])
"""


def test_stop_button_click_ends_the_running_cell(tmp_path):
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name='python3', cwd=str(tmp_path))
    try:
        kc.execute_interactive(f"RESULTS = {str(tmp_path / 'results')!r}", timeout=60)
        msg_id = kc.execute(TRAIN)
        buttons, rows, stdout, clicked, reply = {}, 0, [], False, None
        deadline = time.monotonic() + 240
        while reply is None and time.monotonic() < deadline:
            try: msg = kc.get_iopub_msg(timeout=1)
            except queue.Empty: msg = None
            if msg is not None:
                t, c = msg['msg_type'], msg['content']
                if t == 'comm_open':
                    state = c.get('data', {}).get('state', {})
                    if state.get('_model_name') == 'ButtonModel': buttons[c['comm_id']] = state.get('description')
                elif t == 'comm_msg':
                    state = c.get('data', {}).get('state', {})
                    if c['comm_id'] in buttons and 'description' in state: buttons[c['comm_id']] = state['description']
                    if 'value' in state and isinstance(state['value'], str) and '| T' in state['value']: rows += 1
                elif t == 'stream': stdout.append(c['text'])
            if not clicked and rows >= 1 and buttons:
                stop = next(i for i, d in buttons.items() if d == 'Stop')
                # what ipywidgets' frontend sends when the button is clicked
                kc.shell_channel.send(kc.session.msg('comm_msg', {'comm_id': stop, 'data': {
                    'method': 'custom', 'content': {'event': 'click'}}}))
                clicked = time.monotonic()
            try: reply = kc.get_shell_msg(timeout=0.01) if clicked else None
            except queue.Empty: reply = None
            if reply is not None and reply['parent_header'].get('msg_id') != msg_id: reply = None
        assert clicked, f"no log row or no Stop button seen (buttons {buttons}, rows {rows})"
        assert reply is not None, "the click did not stop the run within 240 s"
        assert reply['content']['status'] == 'ok', reply['content']
        while True:   # the rest of the cell's output
            try: msg = kc.get_iopub_msg(timeout=2)
            except queue.Empty: break
            if msg['msg_type'] == 'stream': stdout.append(msg['content']['text'])
        text = ''.join(stdout)
        assert 'RESULT True' in text, text
        frames = int(text.split('RESULT True')[1].split()[0])
        assert frames < 5_000_000
        assert list((tmp_path / 'results' / 'stop_me' / 'checkpoints').glob('ckpt_*')), 'no checkpoint written'
        assert 'Stopped' in buttons.values(), buttons
    finally:
        kc.stop_channels(); km.shutdown_kernel(now=True)
