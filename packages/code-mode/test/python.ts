export { isAlive, survivors, testPython } from '@ipython-mcp/test-support';

