// The routes. Each page is its own chunk, loaded when first visited, so /chat never downloads the
// dashboard's charts. Deep links work: kakeibo-dev and CloudFront answer every client route with
// index.html, and the router reads the path.

import { ErrorBoundary, LocationProvider, Route, Router, lazy } from 'preact-iso';
import { SessionProvider } from './session';
import { NotFound } from './pages/not-found';

const Landing = lazy(() => import('./pages/landing').then((m) => m.Landing));
const Chat = lazy(() => import('./pages/chat').then((m) => m.Chat));
const DashboardPage = lazy(() => import('./pages/dashboard').then((m) => m.DashboardPage));
const Transactions = lazy(() => import('./pages/transactions').then((m) => m.Transactions));
const Categories = lazy(() => import('./pages/categories').then((m) => m.Categories));
const Budgets = lazy(() => import('./pages/budgets').then((m) => m.Budgets));
const Evals = lazy(() => import('./pages/evals').then((m) => m.Evals));
const Runs = lazy(() => import('./pages/runs').then((m) => m.Runs));
const RunPage = lazy(() => import('./pages/run').then((m) => m.RunPage));
const AdminPage = lazy(() => import('./pages/admin').then((m) => m.AdminPage));
const Privacy = lazy(() => import('./pages/privacy').then((m) => m.Privacy));
const SignIn = lazy(() => import('./pages/sign-in').then((m) => m.SignIn));
const Terms = lazy(() => import('./pages/terms').then((m) => m.Terms));
const ForgotPassword = lazy(() => import('./pages/password').then((m) => m.ForgotPassword));
const ResetPassword = lazy(() => import('./pages/password').then((m) => m.ResetPassword));
const VerifyEmail = lazy(() => import('./pages/password').then((m) => m.VerifyEmail));

export function App() {
  return (
    <LocationProvider>
      <SessionProvider>
        <ErrorBoundary>
          <Router>
            <Route path="/" component={Landing} />
            <Route path="/chat" component={Chat} />
            <Route path="/chat/:id" component={Chat} />
            <Route path="/dashboard" component={DashboardPage} />
            <Route path="/transactions" component={Transactions} />
            <Route path="/categories" component={Categories} />
            <Route path="/budgets" component={Budgets} />
            <Route path="/evals" component={Evals} />
            <Route path="/runs" component={Runs} />
            <Route path="/runs/:id" component={RunPage} />
            <Route path="/admin" component={AdminPage} />
            <Route path="/privacy" component={Privacy} />
            <Route path="/sign-in" component={SignIn} />
            <Route path="/sign-up" component={SignIn} />
            <Route path="/forgot-password" component={ForgotPassword} />
            <Route path="/reset-password" component={ResetPassword} />
            <Route path="/verify-email" component={VerifyEmail} />
            <Route path="/terms" component={Terms} />
            <Route default component={NotFound} />
          </Router>
        </ErrorBoundary>
      </SessionProvider>
    </LocationProvider>
  );
}
