import { render } from 'preact';
import { App } from './App';
import { HostClient } from './hostClient';
import './memory.css';

const root = document.getElementById('app');
if (root) render(<App client={new HostClient()} />, root);
