import { render } from 'preact';
import { App } from './app.js';
import { startLiveEvents } from './live.js';
import { interceptLinks } from './router.js';
import { resumeSession } from './session.js';
import { applyStoredTheme } from './theme.js';
import './styles/app.css';
import './styles/account-desk.css';
import './text/ansi.css';

applyStoredTheme();
const root = document.getElementById('app');
if (root) {
  interceptLinks(root);
  // A login from before a reload comes back through the refresh cookie before anything is shown.
  void resumeSession().finally(() => {
    startLiveEvents();
    render(<App />, root);
  });
}
