// `express4` is an npm alias of express@4 (Express 4 and 5 are both tested); its API is typed like express.
declare module 'express4' {
  import express = require('express');
  export = express;
}
