import { render } from 'preact';
import { App } from './App';
import { historyClient } from './client';
import './history.css';

const root = document.getElementById('app');
if (root) render(<App client={historyClient()} />, root);
