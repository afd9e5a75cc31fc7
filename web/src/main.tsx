import '@fontsource-variable/source-serif-4';
import '@fontsource-variable/public-sans';
import './styles/global.css';
import { render } from 'preact';
import { App } from './app';

const root = document.getElementById('app');
if (root) render(<App />, root);
