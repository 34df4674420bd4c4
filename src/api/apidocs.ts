// Swagger UI at /apidocs/, where galaxy served its UI files: swagger-ui-express's page and init
// script, made for floatip's document, and of swagger-ui-dist's files only those the page loads.
// The dist's own index.html and swagger-initializer.js are its demo, which shows the Petstore, and
// swagger-ui-express answered every other name with the page (a 200 of HTML for `x.js`), or a
// plain-text 404 for package.json: any other name here is the port's 404 in its envelope.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import swaggerUi from 'swagger-ui-express';
import { ApiError, sendError } from './envelope.js';

/** What the page loads (its script, styles and icons), and their source maps for a browser's tools. */
const ASSETS =
  /^\/(swagger-ui-bundle\.js|swagger-ui-standalone-preset\.js|swagger-ui\.css|favicon-(16x16|32x32)\.png)(\.map)?$/;

export function apidocs(document: object): express.Router {
  const [init, files] = swaggerUi.serveFiles(document as never) as RequestHandler[];
  const page = swaggerUi.setup(document as never);
  const router = express.Router();
  // the page and its files are read, nothing else
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    res.setHeader('Allow', 'GET, HEAD');
    sendError(res, 405, `${req.method} ${req.originalUrl}`);
  });
  router.get('/', (req: Request, res: Response, next: NextFunction) => {
    // the page names its files relative to itself: at /apidocs they would be looked for at /
    const [path = '', query] = req.originalUrl.split(/\?(.*)/s);
    if (!path.endsWith('/')) return res.redirect(301, `${path}/${query === undefined ? '' : `?${query}`}`);
    page(req, res, next);
  });
  router.get('/index.html', page);
  // the demo's initializer is asked for by the dist's index.html, which a browser may have cached
  router.get(['/swagger-ui-init.js', '/swagger-initializer.js'], (req, res, next) => {
    req.url = '/swagger-ui-init.js';
    init!(req, res, next);
  });
  router.use((req: Request, res: Response, next: NextFunction) =>
    ASSETS.test(req.path) ? files!(req, res, next) : next(),
  );
  router.use((req: Request) => {
    throw new ApiError(404, `no route ${req.method} ${req.baseUrl}${req.path}`);
  });
  return router;
}
