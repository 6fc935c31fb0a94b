// `koa2` is an npm alias of koa@2 (Koa 2 and 3 are both tested); its API is typed like koa (@types/koa).
declare module 'koa2' {
  import Koa = require('koa');
  export = Koa;
}
