// Styles are bundled by Vite; the import only makes them part of the build.
declare module '*.css';
