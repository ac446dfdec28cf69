import { render } from 'preact';
import { App } from './App';
import { rulesClient } from './client';
import './rules.css';

const root = document.getElementById('app');
if (root) render(<App client={rulesClient()} />, root);
