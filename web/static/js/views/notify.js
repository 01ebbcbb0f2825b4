// The "notify me" toggle: whether waiting requests are announced by the browser (markers.js's WaitNotifier), and
// whether the browser lets them be.

/** The toggle's tooltip for on (the page notifies) and the browser's permission ('granted', 'denied', 'default'). */
export function notifyTitle(on, permission) {
  if (on) return 'Notifications on: the browser tells you when an agent waits for you (click to turn off)';
  if (permission === 'denied') return 'Notifications are blocked for this site in the browser\'s settings';
  return 'Notify me when an agent waits for me';
}

/** button: #notify-toggle. Draws it now and after each click; toast(text, kind) says when the browser refuses. */
export function notifyToggle(button, notifier, toast) {
  const draw = () => {
    button.hidden = !notifier.supported;
    button.setAttribute('aria-pressed', notifier.on ? 'true' : 'false');
    button.title = notifyTitle(notifier.on, notifier.permission);
  };
  button.addEventListener('click', async () => {
    if (notifier.on) {
      notifier.disable();
    } else {
      const p = await notifier.enable();
      if (p === 'denied') toast('The browser blocks notifications for this page; allow them in its site settings.', 'error');
    }
    draw();
  });
  draw();
  return { draw };
}
